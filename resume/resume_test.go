package resume

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// build makes the reference fixture with variants under a fresh temp dir; tests
// that only read the reference fixture use reference instead.
func build(t *testing.T, variants ...fixture.Variant) *fixture.Pipeline {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: variants})
	require.NoError(t, err)
	return p
}

func load(t *testing.T, p *fixture.Pipeline) *pipeline.Pipeline {
	t.Helper()
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	return pl
}

func decideFixture(t *testing.T, p *fixture.Pipeline) (*pipeline.Pipeline, *Analysis) {
	t.Helper()
	pl := load(t, p)
	a, err := Decide(pl, "", 0, p.Now)
	require.NoError(t, err)
	return pl, a
}

func seqs(ds []*pipeline.Dispatch) []int {
	out := []int{}
	for _, d := range ds {
		out = append(out, d.Seq)
	}
	return out
}

func span(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// normalise replaces the temp root and project hash so golden files are stable.
func normalise(p *fixture.Pipeline, s string) string {
	h := filepath.Base(filepath.Dir(p.Scratch))
	return strings.NewReplacer(p.Root, "<ROOT>", h, "<H>").Replace(s)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), got)
}

func TestPlanOnReferenceFixture(t *testing.T) {
	t.Parallel()
	p := reference(t)
	pl, a := decideFixture(t, p)

	newest := p.Checkpoints[6]
	require.Equal(t, "pre-wave-2", newest.Reason)
	require.NotNil(t, a.Checkpoint)
	assert.Equal(t, newest.Hash.String(), a.Checkpoint.Hash, "the retried pre-wave-2 resolves to the newest")
	assert.Equal(t, "3", a.Resume.Phase)
	assert.Equal(t, 2, a.Resume.Wave)
	assert.Equal(t, span(1, 18), seqs(a.Skip))
	assert.Equal(t, []int{19}, seqs(a.Redo))
	assert.Equal(t, 21, pl.NextSeq)
	require.Len(t, a.Partial, 1)
	assert.Equal(t, p.Commits["task3-partial"].String(), a.Partial[0].Commit.Hash)
	assert.Empty(t, a.Failures)

	var md bytes.Buffer
	require.NoError(t, report.WritePlan(&md, BuildPlan(a, nil), report.TableStyle{}))
	golden(t, "plan.golden.md", normalise(p, md.String()))
}

func TestVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		variant   fixture.Variant
		wantPhase string
		wantWave  int
		wantRedo  []int
		wantNext  int
		noCP      bool
		warning   string
	}{
		{fixture.CorruptMiddleLine, "3", 2, []int{19}, 21, false, "line 14"},
		{fixture.NoCheckpointManifest, "3", 2, []int{19}, 21, false, "checkpoint-manifest.md"},
		// No checkpoint at all: nothing is restored, so the resume stays at the wave
		// the dispatches show (re-running wave 1 on a tree that holds its work would
		// redo it twice).
		{fixture.NoShadowRepo, "3", 2, []int{19}, 21, true, "No checkpoint found for pre-wave-2"},
		{fixture.ExtraPreWave10Row, "3", 2, []int{19}, 21, false, "pre-wave-10"},
		{fixture.Marker6Key, "3", 2, []int{19}, 21, false, ""},
		{fixture.Marker4Line, "3", 2, []int{19}, 21, false, ""},
		{fixture.NoCompressionState, "3", 2, []int{19}, 21, false, ""},
		{fixture.NoLiveDispatchDir, "3", 2, []int{19}, 21, false, ""},
		{fixture.UnrecordedDispatch21, "3", 2, []int{19, 21}, 22, false, "21-build-reviewer.md has no manifest line"},
		{fixture.SparseManifest, "3", 2, []int{19}, 21, false, "taken as completed"},
		{fixture.MissingTask2Cleanup, "3", 1, span(11, 19), 21, false, ""},
		{fixture.OtherBranch, "3", 2, []int{19}, 21, false, "a resume will refuse until you switch"},
		{fixture.TasklessCommits, "3", 2, []int{19}, 21, false, ""},
		{fixture.OnlyDispatchActive, "3", 2, []int{19}, 21, false, "found through .dispatch-active-1775430161"},
		{fixture.EvictedPreWave2, "3", 1, span(11, 19), 21, false,
			"Desired checkpoint pre-wave-2 not found. Falling back to pre-wave-1. Replaying from Phase 3 wave 1 instead of Phase 3 wave 2."},
		{fixture.BuildModeInSystemTmp, "3", 2, []int{19}, 21, false, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.variant), func(t *testing.T) {
			t.Parallel()
			p := build(t, tt.variant)
			pl, a := decideFixture(t, p)
			assert.Equal(t, tt.wantPhase, a.Resume.Phase)
			assert.Equal(t, tt.wantWave, a.Resume.Wave)
			assert.Equal(t, tt.wantRedo, seqs(a.Redo))
			assert.Equal(t, tt.wantNext, pl.NextSeq)
			assert.Equal(t, tt.noCP, a.NoCheckpoint)
			if tt.warning != "" {
				assert.Contains(t, strings.Join(Warnings(a), "\n"), tt.warning)
			}
		})
	}
}

func TestVerificationFailureMovesBack(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.MissingTask2Cleanup)
	_, a := decideFixture(t, p)
	require.Len(t, a.Failures, 1)
	f := a.Failures[0]
	assert.Equal(t, 14, f.Seq)
	assert.Equal(t, "cleanup", f.Role)
	assert.Contains(t, f.Check, "attributed to task 2")
	assert.Equal(t, "pre-wave-1", a.Checkpoint.Reason)
	assert.Equal(t, p.Checkpoints[2].Hash.String(), a.Checkpoint.Hash)

	var explain bytes.Buffer
	require.NoError(t, report.WriteExplainAs(&explain, ExplainRows(a), report.TableStyle{}))
	assert.Regexp(t, `Mid-Phase 3 \(wave 2\): pre-wave-2 +\| 14 +\| cleanup +\| commit in window attributed to task 2 \| FAIL`, explain.String())
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	p := reference(t)
	pl := load(t, p)

	a, err := Decide(pl, "2", 0, p.Now)
	require.NoError(t, err)
	assert.Equal(t, "2", a.Resume.Phase)
	assert.Equal(t, "pre-design-gate", a.Checkpoint.Reason)
	assert.Equal(t, span(5, 19), seqs(a.Redo))
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "earlier than the detected resume point")

	pl = load(t, p)
	a, err = Decide(pl, "", 12, p.Now)
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1", a.Checkpoint.Reason, "--from-seq resumes at the start of the seq's phase")

	_, err = Decide(load(t, p), "4", 0, p.Now)
	assert.ErrorIs(t, err, ErrBadResumePoint)
	_, err = Decide(load(t, p), "", 99, p.Now)
	assert.ErrorContains(t, err, "--from-seq 99")
}

func TestDecideIsReadOnly(t *testing.T) {
	t.Parallel()
	p := reference(t)
	before, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	_, a := decideFixture(t, p)
	require.NoError(t, report.WritePlan(&bytes.Buffer{}, BuildPlan(a, nil), report.TableStyle{}))
	after, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

func TestRunRestoresAndReconstructs(t *testing.T) {
	t.Parallel()
	p := build(t)
	_, a := decideFixture(t, p)
	res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
	require.NoError(t, err)
	require.NotNil(t, res.Restore)

	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	assert.Equal(t, "refs/heads/feat/login", head.Name().String())
	assert.Equal(t, p.Checkpoints[6].ProjectHead, head.Hash(), "branch moved back to the checkpoint's project head")
	safety, err := repo.Reference(plumbing.ReferenceName("refs/replay/pre-restore/"+res.Session), true)
	require.NoError(t, err)
	assert.Equal(t, p.Commits["task3-partial"], safety.Hash(), "the partial commit stays reachable")

	csb := res.State.CSB
	assert.Equal(t, fixture.HandoffGoal, csb.Goal)
	assert.Contains(t, csb.Decisions, fixture.HandoffDecision)
	assert.Contains(t, csb.NextSteps, fixture.StatusNextStep)
	assert.Contains(t, csb.NextSteps[0], "seq 19 build-implementer t3")
}

func TestRunNoCompressionStateUsesHandoff(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.NoCompressionState)
	_, a := decideFixture(t, p)
	res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
	require.NoError(t, err)
	assert.Equal(t, fixture.HandoffGoal, res.State.CSB.Goal)
	assert.Contains(t, strings.Join(res.State.Warnings, "\n"), "no Compression State section")
}

func TestRunGuards(t *testing.T) {
	t.Parallel()
	t.Run("other branch refuses before anything", func(t *testing.T) {
		t.Parallel()
		p := build(t, fixture.OtherBranch)
		before, err := fixture.Digest(p.Root)
		require.NoError(t, err)
		_, a := decideFixture(t, p)
		_, err = Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
		require.Error(t, err)
		assert.ErrorIs(t, err, checkpoint.ErrRefused)
		assert.Contains(t, err.Error(), "Pipeline was running on branch feat/login but you are on main")
		after, err := fixture.Digest(p.Root)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
	t.Run("no yes and no prompter refuses", func(t *testing.T) {
		t.Parallel()
		p := build(t)
		before, err := fixture.Digest(p.Root)
		require.NoError(t, err)
		_, a := decideFixture(t, p)
		_, err = Run(a, RunOptions{Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
		assert.ErrorIs(t, err, checkpoint.ErrRefused)
		after, err := fixture.Digest(p.Root)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
	t.Run("declined confirmation refuses, accepted restores", func(t *testing.T) {
		t.Parallel()
		p := build(t)
		_, a := decideFixture(t, p)
		pr := &prompt.Scripted{Confirms: []bool{false}}
		var log strings.Builder
		_, err := Run(a, RunOptions{Prompter: pr, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Log: &log})
		assert.ErrorIs(t, err, checkpoint.ErrRefused)
		require.Len(t, pr.Asked, 1)
		assert.Contains(t, pr.Asked[0], "pre-wave-2")
		assert.NotContains(t, log.String(), "Restoring the project directory", "declined: nothing says it is restoring")

		pr = &prompt.Scripted{Confirms: []bool{true}}
		log.Reset()
		res, err := Run(a, RunOptions{Prompter: pr, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Log: &log})
		require.NoError(t, err)
		assert.NotNil(t, res.Restore)
		assert.Contains(t, log.String(), "Restoring the project directory", "said once the user said yes")
	})
	t.Run("no checkpoint needs a yes", func(t *testing.T) {
		t.Parallel()
		p := build(t, fixture.NoShadowRepo)
		_, a := decideFixture(t, p)
		_, err := Run(a, RunOptions{Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
		assert.ErrorIs(t, err, ErrNotConfirmed)
		res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
		require.NoError(t, err)
		assert.True(t, res.KeptDiskState)
		assert.Nil(t, res.Restore)
	})
}

// removeEvidence deletes every output file and receipt of seq from a built fixture:
// the dispatch's work can no longer be proven.
func removeEvidence(t *testing.T, p *fixture.Pipeline, seq int) {
	t.Helper()
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		matches, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(seq)+"-*-*.md"))
		require.NoError(t, err)
		for _, m := range matches {
			require.NoError(t, os.Remove(m))
		}
		ledger := filepath.Join(dir, "receipt-ledger.jsonl")
		data, err := os.ReadFile(ledger)
		require.NoError(t, err)
		var kept []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if !strings.Contains(l, fmt.Sprintf(`"dispatch_id":"%d-`, seq)) {
				kept = append(kept, l)
			}
		}
		require.NoError(t, os.WriteFile(ledger, []byte(strings.Join(kept, "")), 0o644))
	}
}

func TestNoVerifiedBoundary(t *testing.T) {
	t.Parallel()
	p := build(t)
	removeEvidence(t, p, 1) // the first dispatch of the pipeline can no longer be proven
	_, a := decideFixture(t, p)
	require.True(t, a.NoVerifiedBoundary)
	assert.Equal(t, 1, a.Failures[len(a.Failures)-1].Seq)
	assert.Empty(t, a.Resume.Reasons, "back to the start of the pipeline")

	before, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	_, err = Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
	require.Error(t, err, "without a terminal there is no one to choose")
	assert.ErrorIs(t, err, ErrNotConfirmed, "a refusal, naming its cause")
	assert.Contains(t, err.Error(), "There is no terminal to ask on")
	assert.Contains(t, err.Error(), "No verified boundary")
	after, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	tests := []struct {
		choice    int
		wantKept  bool
		wantFresh bool
		wantRedo  int
		wantErr   error
	}{
		{0, true, false, 1, nil}, // resume with current disk state: the detected point, unverified
		{2, false, false, 0, ErrNotConfirmed},
		{1, false, true, 0, nil}, // start fresh: the markers are archived, nothing else runs (last: it ends the pipeline)
	}
	for _, tt := range tests {
		_, a := decideFixture(t, p)
		pr := &prompt.Scripted{Selects: []int{tt.choice}}
		res, err := Run(a, RunOptions{Prompter: pr, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
		if tt.wantErr == nil {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, tt.wantErr)
		}
		assert.Equal(t, []int{2}, pr.Defaults, "abort is the default")
		if err != nil {
			continue
		}
		assert.Equal(t, tt.wantKept, res.KeptDiskState)
		assert.Equal(t, tt.wantFresh, res.StartedFresh)
		assert.Nil(t, res.Restore, "nothing is restored without a verified boundary")
		if tt.wantFresh {
			assert.NoFileExists(t, filepath.Join(p.Scratch, ".pipeline-active"))
			assert.Len(t, res.Archived, 2)
			continue
		}
		assert.Len(t, WorkItems(a), tt.wantRedo)
		// The block never claims a verification that did not happen.
		assert.True(t, res.Unverified)
		var csb strings.Builder
		require.NoError(t, report.WriteCSB(&csb, res.State.CSB))
		assert.NotContains(t, csb.String(), "Health: GREEN")
		assert.NotContains(t, csb.String(), "prior work verified through seq")
		assert.Contains(t, csb.String(), "NOTHING was verified")
	}
}

func TestMarkerDispatchDirOutsideIsNotRead(t *testing.T) {
	t.Parallel()
	p := build(t)
	marker := filepath.Join(p.Scratch, ".pipeline-active")
	data, err := os.ReadFile(marker)
	require.NoError(t, err)
	outside := filepath.Join(p.Root, "elsewhere", "crucible-dispatch-1775430161")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "5-plan-writer-notes.md"), []byte("planted"), 0o644))
	require.NoError(t, os.WriteFile(marker, []byte(strings.Replace(string(data), p.LiveDispatchDir, outside, 1)), 0o644))

	pl, err := pipeline.Load(pipeline.Options{Path: p.ManifestPath, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(pl.Warnings, "\n"), `field "dispatch_dir"`)
	assert.NotContains(t, pl.Evidence.Outputs[5], "5-plan-writer-notes.md", "nothing is read outside the allowed roots")
}
