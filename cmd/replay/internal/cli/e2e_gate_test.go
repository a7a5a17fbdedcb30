package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGateTurnsAResultIntoAnExitCode gates a replicated replay's result; the same
// run's HTML report is checked after (see checkHTMLReport).
func TestGateTurnsAResultIntoAnExitCode(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	html := filepath.Join(p.Root, "out", "ab.html")
	r := s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "10", "--until-decided", "--max-replicas", "16", "--json", "--html", html)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc replicasJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.Equal(t, "reject", doc.Decision.Verdict, "the stricter reviewer fails the acceptance verdict")
	saved := filepath.Join(p.Root, "ab.json")
	require.NoError(t, os.WriteFile(saved, []byte(r.Stdout), 0o644))

	before := digest(t, p.Root)
	g := s.Run(t, p.Project, "gate", p.Scratch)
	assert.Equal(t, 1, g.Code, g.Stderr)
	assert.Regexp(t, `Gate FAILED: decision reject over \d+ replicas per arm`, g.Stdout)
	assert.Contains(t, g.Stderr, "gate failed: the decision is reject (step 1")
	// The gate says what the decision rests on: the rule's step, alpha, the
	// tests with their evidence and the confidence sequences.
	for _, w := range []string{"Decided by step 1 of the rule: Pass rate worse: ", "Statistics:\n  Alpha: 0.05",
		"that the mutated arm passes less often", "confidence sequence"} {
		assert.Contains(t, g.Stdout, w)
	}

	g = s.Run(t, p.Project, "gate", "--result", saved, "--fail-on", "undecided")
	assert.Equal(t, 0, g.Code, g.Stderr)
	assert.Contains(t, g.Stdout, "Gate passed: decision reject")

	g = s.Run(t, p.Project, "gate", "--result", saved, "--fail-on", "", "--max-regression", "0.2", "--json")
	assert.Equal(t, 1, g.Code, g.Stderr)
	var rep struct {
		PassRateDrop float64  `json:"pass_rate_drop"`
		Failures     []string `json:"failures"`
		Step         int      `json:"step"`
		Rule         string   `json:"rule"`
		Statistics   []string `json:"statistics"`
		Decision     struct {
			Alpha    float64 `json:"alpha"`
			PassTest struct {
				EWorse   float64            `json:"e_worse"`
				Interval map[string]float64 `json:"interval"`
			} `json:"pass_test"`
		} `json:"decision"`
	}
	require.NoError(t, json.Unmarshal([]byte(g.Stdout), &rep), g.Stdout)
	assert.Equal(t, 1, rep.Step)
	assert.Contains(t, rep.Rule, "Pass rate worse")
	assert.Len(t, rep.Statistics, 4)
	assert.Equal(t, 0.05, rep.Decision.Alpha)
	assert.GreaterOrEqual(t, rep.Decision.PassTest.EWorse, 60.0, "a reject at step 1: evidence of at least 3/alpha")
	assert.Contains(t, rep.Decision.PassTest.Interval, "lo")
	assert.Greater(t, rep.PassRateDrop, 0.2)
	require.NotEmpty(t, rep.Failures)
	assert.Contains(t, rep.Failures[0], "the pass rate drops by")
	for _, f := range rep.Failures[1:] {
		assert.Contains(t, f, "rises by", "only a drop in pass rate or a rise of the metric fails it")
	}

	g = s.Run(t, p.Project, "gate", "--result", saved, "--fail-on", "", "--max-regression", "1")
	assert.Equal(t, 0, g.Code, "a drop within --max-regression passes: %s", g.Stderr)

	for name, args := range map[string][]string{
		"unknown verdict":     {"gate", "--result", saved, "--fail-on", "maybe"},
		"negative regression": {"gate", "--result", saved, "--max-regression", "-0.1"},
		"missing result":      {"gate", "--result", filepath.Join(p.Root, "none.json")},
		"not a result":        {"gate", "--result", p.ManifestPath},
	} {
		g = s.Run(t, p.Project, args...)
		assert.Equal(t, 2, g.Code, "%s: %s", name, g.Stderr)
	}
	assert.Equal(t, before, digest(t, p.Root), "the gate writes nothing")
	checkHTMLReport(t, s, p, r, html)
}
