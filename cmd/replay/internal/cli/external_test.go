package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/templates"
)

// externalProfile writes the build profile with role marked external and returns
// the file's path.
func externalProfile(t *testing.T, p *fixture.Pipeline, role string) string {
	t.Helper()
	prof, err := templates.Load("build")
	require.NoError(t, err)
	prof.SideEffects.Commits = slices.DeleteFunc(prof.SideEffects.Commits, func(r string) bool { return r == role })
	prof.SideEffects.External = append(prof.SideEffects.External, role)
	data, err := json.Marshal(prof)
	require.NoError(t, err)
	path := filepath.Join(p.Root, "external-profile.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestExternalRoleFailsClosedInAReplay(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	prof := externalProfile(t, p, "cleanup")
	repl := stricter(t, p, "stricter.md")
	before := captureUserState(t, p)
	ab := []string{"--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--profile", prof, "--yes", "--agent", "builtin:sim", "--now", now(p)}

	// The plan says it, and its check fails (exit 1; the run is refused, exit 3).
	r := s.Run(t, p.Project, append([]string{"plan", p.Scratch}, ab...)...)
	assert.Equal(t, 1, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "cleanup): absent: no recording under")
	assert.Contains(t, r.Stdout, "; external: needs a recording or --allow-external")

	// The replay fails closed before any dispatch: not one manifest line appended.
	r = s.Run(t, p.Project, append([]string{p.Scratch}, ab...)...)
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Regexp(t, `seq 1[34] \(cleanup\): external role .* nothing was dispatched .*--allow-external`, r.Stderr)
	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.Equal(t, string(before.manifest), string(after), "no dispatch was made")
	_, err = os.Stat(filepath.Join(p.Scratch, "replay-worktrees"))
	assert.True(t, os.IsNotExist(err), "not even a worktree was made")

	// Allowed, it runs live (and records its answers).
	r = s.Run(t, p.Project, append([]string{p.Scratch, "--allow-external"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertUntouched(t, p, before)

	// Recorded, a later replay is served from the recording without the flag.
	r = s.Run(t, p.Project, append([]string{"plan", p.Scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr+r.Stdout)
	assert.Contains(t, r.Stdout, "## Reuse score")
	assert.NotContains(t, r.Stdout, "external: needs a recording")
	r = s.Run(t, p.Project, append([]string{p.Scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
}

func TestExternalRoleRunsInAResumeOfTheOwnRun(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	prof := externalProfile(t, p, "build-implementer")
	r := s.Run(t, p.Project, "plan", p.Scratch, "--profile", prof, "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "build-implementer): absent: no recording under")
	assert.Contains(t, r.Stdout, "; external: runs live")
	r = s.Run(t, p.Project, p.Scratch, "--profile", prof, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
}

func TestForkContinuationRefusesAnExternalRole(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	prof := externalProfile(t, p, "adversarial-tester")
	r := s.Run(t, p.Project, "fork", p.Scratch, "--at", "15", "--agent", "builtin:sim", "--profile", prof, "--now", now(p))
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Regexp(t, `seq 1[78] \(adversarial-tester\): external role .*--allow-external`, r.Stderr)
	r = s.Run(t, p.Project, "fork", p.Scratch, "--at", "15", "--agent", "builtin:sim", "--profile", prof, "--allow-external", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
}

func TestAllowExternalOnEveryReplayingCommand(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	for _, cmd := range [][]string{{"--help"}, {"plan", "--help"}, {"fork", "--help"}, {"corpus", "--help"}} {
		r := s.Run(t, p.Project, cmd...)
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Contains(t, r.Stdout, "--allow-external", "%v", cmd)
	}
}
