package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An agent that cannot start is an infrastructure failure: the run exits
// non-zero naming the cause, writes no decision, and `replay gate` on the log
// fails instead of passing on it.
func TestReplicatedABReplayWithNoRunnableAgentFails(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	args := append(replicasArgs(t, p, "--replicas", "2"), "--agent", "replay-no-such-agent-xyz")
	r := s.Run(t, p.Project, args...)
	assert.NotEqual(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stderr, "the agent cannot start")
	assert.Contains(t, r.Stderr, "exit 127")
	assert.NotContains(t, r.Stdout, "## Decision")
	g := s.Run(t, p.Project, "gate", p.Scratch)
	assert.Equal(t, 1, g.Code, g.Stdout+g.Stderr)
	assert.Contains(t, g.Stderr, "made no decision")
}
