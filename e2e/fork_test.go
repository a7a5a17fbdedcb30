package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestForkSmoke drives state, fork, lineage and diff through the built binary: the
// fork's worktree is a git repository the git binary reads on the fork's branch,
// and the original run's project and dispatch dir are byte-identical afterwards.
func TestForkSmoke(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Project) + digest(t, p.DurableDispatchDir) + digest(t, p.Shadow)
	verdict := filepath.Join(p.Root, "verdict.txt")
	require.NoError(t, os.WriteFile(verdict, []byte("VERDICT: FAIL\nSUMMARY: Task 1 rejected\n"), 0o644))

	r := s.Run(t, p.Project, "state", p.Scratch, "--at", "15", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"at": 15`)

	r = s.Run(t, p.Project, "fork", p.Scratch, "--at", "15", "--substitute", "15="+verdict, "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	var child struct {
		Session  string `json:"session"`
		Worktree string `json:"worktree_dir"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &child))
	if _, ok := testtools.GitIfPresent(t); ok {
		out, err := s.Git("-C", child.Worktree, "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "replay/"+child.Session, strings.TrimSpace(string(out)))
	}

	r = s.Run(t, p.Project, "lineage", p.Scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, child.Session+" fork at seq 15")

	r = s.Run(t, p.Project, "diff", p.Scratch, child.Session, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "## First Divergence\n- Seq 15 (build-reviewer")

	r = s.Run(t, p.Project, "fork", p.Scratch, "--at", "99")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "give a seq from 1 to 19")
	assert.Equal(t, before, digest(t, p.Project)+digest(t, p.DurableDispatchDir)+digest(t, p.Shadow))
}
