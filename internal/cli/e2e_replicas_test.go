package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplicatedABReplayDecides(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	before := captureUserState(t, p)
	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
		"--replicas", "3", "--jobs", "2", "--agent", "builtin:sim?flake=0.1&seed=7", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	t.Log(r.Stdout)
	assertUntouched(t, p, before)
}
