package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicatedABReplayWithShellAgentAndCheck runs the binary: a replicated A/B
// replay with a real shell agent, two replicas at once, and a check script run in
// each replica's worktree.
func TestReplicatedABReplayWithShellAgentAndCheck(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, append(orig, "\n- Every change must be tested.\n"...), 0o644))
	ag := writeAgent(t, p, "agent.sh", "echo \"$REPLAY_SESSION\" > replica-session.txt\necho PASS\necho \"SUMMARY: $REPLAY_ROLE passed\"\n")
	check := filepath.Join(p.Root, "check.sh")
	require.NoError(t, os.WriteFile(check, []byte("#!/bin/sh\ntest -f replica-session.txt\n"), 0o755))
	before := digest(t, p.Project)

	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
		"--replicas", "3", "--jobs", "2", "--agent", ag, "--check", check, "--now", now(p), "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Decision struct{ Verdict string } `json:"decision"`
		Replicas []struct {
			Session   string `json:"session"`
			Worktree  string `json:"worktree"`
			Passed    bool   `json:"passed"`
			CheckExit *int   `json:"check_exit"`
		} `json:"replicas"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.Len(t, doc.Replicas, 6)
	for _, rep := range doc.Replicas {
		require.NotNil(t, rep.CheckExit)
		assert.True(t, rep.Passed, "the check passes in the worktree the agent wrote to")
		assert.Equal(t, rep.Session+"\n", readFile(t, filepath.Join(rep.Worktree, "replica-session.txt")), "each replica works in its own worktree")
	}
	// Equal pass rates and equal durations under a fixed clock: no effect to adopt.
	assert.Equal(t, "undecided", doc.Decision.Verdict)
	assert.Equal(t, before, digest(t, p.Project), "the user's project is untouched")

	r = s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--replicas", "2", "--agent", ag, "--check", filepath.Join(p.Root, "missing.sh"), "--now", now(p))
	assert.Equal(t, 2, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "is not an executable file")
}
