package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reuseSection is the "## Reuse score" section of a plan or a diff, the fixture's
// root written <ROOT>.
func reuseSection(t *testing.T, root, out string) string {
	t.Helper()
	i := strings.Index(out, "## Reuse score")
	require.GreaterOrEqual(t, i, 0, out)
	rest := out[i:]
	if j := strings.Index(rest[1:], "\n## "); j >= 0 {
		rest = rest[:j+2]
	}
	return strings.ReplaceAll(rest, root, "<ROOT>")
}

func TestReuseScoreInPlanAndDiff(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	ab := []string{"--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--agent", "builtin:sim", "--now", now(p)}

	// Nothing recorded yet: every dispatch would run live, and the plan says why.
	r := s.Run(t, p.Project, append([]string{"plan", p.Scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertGolden(t, filepath.Join("testdata", "reuse", "plan-unrecorded.txt"), reuseSection(t, p.Root, r.Stdout))

	r = s.Run(t, p.Project, append([]string{p.Scratch, "--diff", "--yes"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertGolden(t, filepath.Join("testdata", "reuse", "diff-live.txt"), reuseSection(t, p.Root, r.Stdout))

	// The first replay recorded its answers: the same replay is now served from them.
	r = s.Run(t, p.Project, append([]string{"plan", p.Scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertGolden(t, filepath.Join("testdata", "reuse", "plan-recorded.txt"), reuseSection(t, p.Root, r.Stdout))
	r = s.Run(t, p.Project, append([]string{"plan", p.Scratch, "--json"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Reuse struct {
			Served, Total int
			Mode          string
		} `json:"reuse"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "exact", doc.Reuse.Mode)
	assert.Positive(t, doc.Reuse.Total)

	// --reuse never: nothing would be served, each for that reason.
	r = s.Run(t, p.Project, append([]string{"plan", p.Scratch, "--reuse", "never"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "0 of ")
	assert.Contains(t, r.Stdout, "): --reuse never\n")

	// Another agent: every recording is stale, and the field is named.
	other := append([]string{"plan", p.Scratch}, ab[:len(ab)-4]...)
	r = s.Run(t, p.Project, append(other, "--agent", "builtin:sim?flake=0.5&seed=1", "--now", now(p))...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "0 of ")
	assert.Contains(t, r.Stdout, "(build-implementer): stale: agent changed\n")

	r = s.Run(t, p.Project, append([]string{p.Scratch, "--diff", "--yes"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertGolden(t, filepath.Join("testdata", "reuse", "diff-recorded.txt"), reuseSection(t, p.Root, r.Stdout))
	d := s.Run(t, p.Project, "diff", p.Scratch, "--now", now(p))
	require.Equal(t, 0, d.Code, d.Stderr)
	assert.Equal(t, reuseSection(t, p.Root, r.Stdout), reuseSection(t, p.Root, d.Stdout), "replay diff renders the same score again")
}
