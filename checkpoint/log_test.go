package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

func TestMatchReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason, want string
		match        bool
	}{
		{"pre-wave-1", "pre-wave-1", true},
		{"pre-wave-10", "pre-wave-1", false},
		{"pre-wave-1", "pre-wave-10", false},
		{"pre-wave-1-retry", "pre-wave-1", true},
		{"pre-wave-1 (retry)", "pre-wave-1", true},
		{"pre-wave-2", "pre-wave-1", false},
		{"pre-debug-login", "pre-debug-*", true},
		{"pre-debug-", "pre-debug-*", true},
		{"pre-design-gate", "pre-debug-*", false},
		{"pre-code-review", "pre-code-review", true},
		{"pre-code-reviewer", "pre-code-review", false},
		{"pre-wave-1", "", false},
		{" pre-wave-1 ", "pre-wave-1", true},
	}
	for _, tt := range tests {
		t.Run(tt.reason+"~"+tt.want, func(t *testing.T) {
			assert.Equal(t, tt.match, MatchReason(tt.reason, tt.want))
		})
	}
}

// newPipelineShadow makes checkpoints the way a pipeline does, each after a project commit.
func newPipelineShadow(t *testing.T, reasons ...string) (*testProject, *Store) {
	t.Helper()
	p := newTestProject(t)
	s := p.store()
	for i, r := range reasons {
		p.write("progress.txt", fmt.Sprintf("%d %s\n", i, r))
		p.commit("work before "+r, base.Add(time.Duration(i+1)*10*time.Minute))
		_, created, err := s.Create(CreateOptions{Reason: r, Source: "build", Now: clockAt(time.Duration(i+1)*10*time.Minute + time.Minute)})
		require.NoError(t, err)
		require.True(t, created)
	}
	return p, s
}

func TestCorrelate(t *testing.T) {
	t.Parallel()
	_, s := newPipelineShadow(t, "pre-design-gate", "pre-plan-gate", "pre-wave-1", "pre-wave-2", "pre-wave-10", "pre-wave-2")
	cps, warnings, err := s.List()
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Len(t, cps, 6)

	tests := []struct {
		name     string
		chain    []string
		want     int // index into cps; -1 for none
		fellBack bool
	}{
		{"retried pre-wave-2 resolves to the newest", []string{"pre-wave-2"}, 5, false},
		{"pre-wave-1 never matches pre-wave-10", []string{"pre-wave-1"}, 2, false},
		{"pre-wave-10 is its own", []string{"pre-wave-10"}, 4, false},
		{"missing falls back along the chain", []string{"pre-wave-3", "pre-wave-2", "pre-wave-1"}, 5, true},
		{"nothing matches", []string{"pre-impl-gate"}, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := s.Correlate(tt.chain)
			require.NoError(t, err)
			assert.Equal(t, tt.chain[0], c.Wanted)
			assert.Equal(t, tt.fellBack, c.FellBack)
			if tt.want < 0 {
				assert.Nil(t, c.Checkpoint)
				assert.Equal(t, -1, c.Index)
				return
			}
			require.NotNil(t, c.Checkpoint)
			assert.Equal(t, cps[tt.want].Hash, c.Checkpoint.Hash)
			assert.Equal(t, cps[tt.want].Reason, c.Found)
		})
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	_, s := newPipelineShadow(t, "pre-wave-1", "pre-wave-2", "pre-wave-2")
	cps, _, err := s.List()
	require.NoError(t, err)
	for _, tt := range []struct {
		ref  string
		want int
	}{{"pre-wave-2", 2}, {"pre-wave-1", 0}, {cps[1].Short, 1}, {cps[1].Hash.String(), 1}, {"HEAD", 2}} {
		cp, err := s.Find(tt.ref)
		require.NoError(t, err, tt.ref)
		assert.Equal(t, cps[tt.want].Hash, cp.Hash, tt.ref)
	}
	_, err = s.Find("pre-wave-3")
	assert.ErrorContains(t, err, "no checkpoint matches")
}

func TestForeignCheckpoints(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	c1 := p.commit("design doc", base.Add(10*time.Minute))
	p.foreign(s, "pre-design-gate | 2026-04-07 14:15:00 | build", base.Add(15*time.Minute))
	p.write("plan.md", "plan\n")
	c2 := p.commit("plan", base.Add(20*time.Minute))
	p.foreign(s, "pre-wave-1 | 2026-04-07T14:25:00Z | build", base.Add(25*time.Minute))
	p.write("a.go", "package a\n")
	p.commit("task 1", base.Add(30*time.Minute))
	p.foreign(s, "manual snapshot", base.Add(35*time.Minute))

	cps, warnings, err := s.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-design-gate,pre-wave-1,manual snapshot", reasons(cps))
	assert.Equal(t, base.Add(15*time.Minute), cps[0].Time)
	assert.Equal(t, "build", cps[0].Source)
	assert.True(t, cps[0].ProjectHead.IsZero())
	assert.False(t, cps[0].InManifest)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "manual snapshot")
	assert.Contains(t, warnings[1], "checkpoint-manifest.md not found")

	c, err := s.Correlate([]string{"pre-wave-2", "pre-wave-1", "pre-plan-gate", "pre-design-gate"})
	require.NoError(t, err)
	require.NotNil(t, c.Checkpoint)
	assert.Equal(t, "pre-wave-1", c.Found)
	assert.True(t, c.FellBack)
	assert.Equal(t, 1, c.Index)

	head, err := s.ProjectHeadAt(cps[0])
	require.NoError(t, err)
	assert.Equal(t, c1, head, "the newest project commit not later than the checkpoint")
	head, err = s.ProjectHeadAt(*c.Checkpoint)
	require.NoError(t, err)
	assert.Equal(t, c2, head)
}

func TestManifestDisagreements(t *testing.T) {
	t.Parallel()
	p, s := newPipelineShadow(t, "pre-wave-1", "pre-wave-2", "pre-wave-3")
	cps, _, err := s.List()
	require.NoError(t, err)
	manifest := "# Checkpoint Manifest\n\n| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n" +
		"| " + cps[0].Short + " | 2026-04-07 14:11:00 | pre-wave-1 | build |\n" +
		"| deadbeef | 2026-04-07 14:12:00 | pre-wave-9 | build |\n" +
		"| " + cps[1].Short + " | 2026-04-07 14:21:00 | pre-wave-7 | build |\n" +
		"| torn row\n"
	require.NoError(t, os.WriteFile(paths.CheckpointManifest(p.shadow), []byte(manifest), 0o644))
	got, warnings, err := s.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1,pre-wave-2,pre-wave-3", reasons(got), "the log wins")
	require.Len(t, warnings, 3)
	assert.Contains(t, warnings[0], "deadbeef")
	assert.Contains(t, warnings[1], `"pre-wave-7" there but "pre-wave-2" in the shadow log`)
	assert.Contains(t, warnings[2], "lacks 1 checkpoint")
	assert.True(t, got[0].InManifest)
	assert.False(t, got[2].InManifest)
}

// TestListLooseAndPacked lists the same checkpoints from loose objects and, after a
// gc of the shadow repository by the git binary, from a pack: the two ways the log
// reads commits.
func TestListLooseAndPacked(t *testing.T) {
	testtools.Git(t, "git binary not installed")
	p := newTestProject(t)
	s := p.store()
	for i, reason := range []string{"pre-wave-1", "pre-wave-2", "pre-wave-3"} {
		p.write("src/app.go", fmt.Sprintf("package app // %d\n", i))
		_, created, err := s.Create(CreateOptions{Reason: reason, Now: clockAt(time.Duration(i) * time.Minute)})
		require.NoError(t, err)
		require.True(t, created)
	}
	loose, _, err := s.List()
	require.NoError(t, err)
	require.Len(t, loose, 3, reasons(loose))

	gitIn(t, p.shadow, "--git-dir="+p.shadow, "gc", "--prune=now", "--quiet")
	packs, err := filepath.Glob(filepath.Join(p.shadow, "objects", "pack", "*.pack"))
	require.NoError(t, err)
	require.NotEmpty(t, packs, "git gc wrote no pack")
	packed, _, err := p.store().List()
	require.NoError(t, err)
	assert.Equal(t, loose, packed)
}
