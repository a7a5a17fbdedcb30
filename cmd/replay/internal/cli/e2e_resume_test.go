package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

func TestPlanThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)

	r := s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "# Replay Plan (dry-run)")
	assert.Contains(t, r.Stdout, "**Resume point:** Phase 3 boundary, wave 2 (pre-wave-2, checkpoint "+p.Checkpoints[6].Hash.String()[:8])
	assert.Contains(t, r.Stdout, "**Next seq:** 21")
	assert.Contains(t, r.Stdout, "wip: task 3 partial")

	r = s.Run(t, p.Project, "--dry-run", "--explain", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "## Why it resumes there", "no PATH: the current project's scratch dir")

	r = s.Run(t, p.Project, "plan", p.ManifestPath, "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		NextSeq int `json:"next_seq"`
		Skip    []struct {
			Seq int `json:"seq"`
		} `json:"skip"`
		Redo []struct {
			Seq int `json:"seq"`
		} `json:"redo"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	assert.Equal(t, 21, doc.NextSeq)
	assert.Len(t, doc.Skip, 18)
	require.Len(t, doc.Redo, 1)
	assert.Equal(t, 19, doc.Redo[0].Seq)

	assert.Equal(t, before, digest(t, p.Root), "plan and --dry-run change not a byte")
}

func TestPlanExplainsVerificationFailure(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.MissingTask2Cleanup)
	r := s.Run(t, p.Project, "plan", p.Scratch, "--explain", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Resume point:** Phase 3 boundary, wave 1 (pre-wave-1")
	assert.Regexp(t, `\| 14 +\| cleanup +\| commit in window attributed to task 2 \| FAIL`, r.Stdout)
}

func TestResumeThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "===COMPRESSION_STATE===")
	assert.Contains(t, r.Stdout, "Goal: "+fixture.HandoffGoal)
	assert.Contains(t, r.Stdout, fixture.HandoffDecision)
	assert.Contains(t, r.Stdout, fixture.StatusNextStep)
	assert.Contains(t, r.Stdout, "Undo: replay checkpoint restore ")

	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	assert.Equal(t, p.Checkpoints[6].ProjectHead, head.Hash())
	session := p.Now.Unix()
	ref, err := repo.Reference(plumbing.ReferenceName("refs/replay/pre-restore/"+strconv.FormatInt(session, 10)), true)
	require.NoError(t, err)
	assert.Equal(t, p.Commits["task3-partial"], ref.Hash())
	_, err = os.Stat(filepath.Join(p.Project, "NOTES.md"))
	assert.NoError(t, err, "untracked file of the checkpoint is back")

	// The manifest is untouched: a hand-off appends nothing.
	r2 := s.Run(t, p.Project, "manifest", "seq", "--dir", p.DurableDispatchDir)
	require.Equal(t, 0, r2.Code, r2.Stderr)
	assert.Equal(t, "21", strings.TrimSpace(r2.Stdout))
}

func TestResumeGuardsThroughCLI(t *testing.T) {
	t.Parallel()
	t.Run("branch mismatch exits 3 and changes nothing", func(t *testing.T) {
		s, p := pipelineSandbox(t, fixture.OtherBranch)
		before := digest(t, p.Root)
		r := s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
		assert.Equal(t, 3, r.Code)
		assert.Contains(t, r.Stderr, "Pipeline was running on branch feat/login but you are on main")
		assert.Equal(t, before, digest(t, p.Root))
	})
	t.Run("no tty and no yes exits 3 and changes nothing", func(t *testing.T) {
		s, p := pipelineSandbox(t)
		before := digest(t, p.Root)
		r := s.Run(t, p.Project, p.Scratch, "--now", now(p))
		assert.Equal(t, 3, r.Code)
		assert.Contains(t, r.Stderr, "pass --yes")
		assert.Equal(t, before, digest(t, p.Root))
	})
}

func TestStatusThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, "status", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "1775430161")
	assert.Contains(t, r.Stdout, "feat/login")
	assert.Contains(t, r.Stdout, "pre-wave-2")

	empty := NewSandbox(t)
	r = empty.Run(t, "", "status")
	assert.Equal(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "No crashed or active pipeline")
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	require.NoError(t, os.WriteFile(filepath.Join(p.Root, "garbage.jsonl"), []byte("not json\n{also not\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(p.Root, "bad-scratch"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.Root, "bad-scratch", ".pipeline-active"), []byte("{broken"), 0o644))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"usage: --diff without --mutate", []string{p.Scratch, "--diff"}, 2, "--diff compares an A/B replay"},
		{"usage: bad --now", []string{"plan", p.Scratch, "--now", "yesterday"}, 2, "RFC 3339"},
		{"usage: --from-phase past the detected point", []string{"plan", p.Scratch, "--from-phase", "4", "--now", now(p)}, 2, "later than the detected resume point"},
		{"nothing to resume: missing path", []string{"plan", filepath.Join(p.Root, "nope")}, 4, "Manifest not found"},
		{"nothing to resume: garbage manifest", []string{"plan", filepath.Join(p.Root, "garbage.jsonl")}, 4, "Manifest is empty or entirely corrupted. Cannot resume."},
		{"failure: corrupt marker", []string{"plan", filepath.Join(p.Root, "bad-scratch")}, 1, ".pipeline-active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Run(t, p.Project, tt.args...)
			assert.Equal(t, tt.code, r.Code, r.Stderr)
			assert.Contains(t, r.Stderr, tt.msg)
			assert.NotContains(t, r.Stderr, "goroutine", "no stack trace")
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(firstErrorBlock(r.Stderr)), "\n")+1, "one-line error: %q", r.Stderr)
		})
	}
}

// firstErrorBlock returns the "replay: ..." line of stderr.
func firstErrorBlock(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "replay: ") {
			return l
		}
	}
	return stderr
}
