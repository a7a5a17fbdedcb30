package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicatedRunReportsEachReplicaWhenDone runs a replicated A/B replay off a
// terminal: stderr has one line per replica, with its arm, N/M, session and outcome,
// and no line that reads like a result before the replica ran.
func TestReplicatedRunReportsEachReplicaWhenDone(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	stricter := filepath.Join(p.Root, "stricter.md")
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stricter, append(orig, "\n- Every function must have a test.\n"...), 0o644))
	r := runGuarded(t, s, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+stricter, "--templates", p.Templates,
		"--replicas", "2", "--jobs", "2", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	done := regexp.MustCompile(`(?m)^(baseline|mutated) replica [12]/2 \(session \S+\) done in \S+: \d+ dispatches`).FindAllString(r.Stderr, -1)
	assert.Len(t, done, 4, r.Stderr)
	assert.NotRegexp(t, `replica \d+: session`, r.Stderr, "no line before a replica runs")
	assert.False(t, strings.Contains(r.Stdout, "done in"), "progress stays on stderr")

	// lineage marks each replica with its arm.
	r = runGuarded(t, s, p.Project, "lineage", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	for _, arm := range []string{"[baseline replica 1/2]", "[baseline replica 2/2]", "[mutated replica 1/2]", "[mutated replica 2/2]"} {
		assert.Contains(t, r.Stdout, arm)
	}
	r = runGuarded(t, s, p.Project, "lineage", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"mutated replica 2/2"`)

	r = runGuarded(t, s, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+stricter, "--templates", p.Templates,
		"--replicas", "1", "--agent", "builtin:sim", "--now", now(p), "--quiet")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "done in", "--quiet shows no progress")
}
