package replicate

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notRunResult is sampleResult with dispatch 7 never run by the mutated arm (its
// replicas stopped before it).
func notRunResult(t testing.TB) *Result {
	t.Helper()
	res := sampleResult(t)
	for _, r := range res.Replicas {
		if r.Arm == Mutated {
			r.Dispatches = r.Dispatches[:2]
		}
	}
	res.Noise = noiseOf(res.Replicas, res.Rule.Alpha)
	res.Dispatches = perDispatch(res.Replicas)
	return res
}

// Every report format shows what the decision rests on (the tests, their
// evidence, the confidence sequences, alpha, how many more replicas would tell
// and the rule's step in words) and a dispatch an arm did not run as not run,
// never as a determinism of 1 or a median of 0.
func TestEveryFormatShowsTheStatisticsAndWhatDidNotRun(t *testing.T) {
	t.Parallel()
	res := notRunResult(t)
	d := res.Decision
	lines := StatisticsLines(d)
	require.Len(t, lines, 5)
	want := []string{"Alpha: 0.05", "reaches 60", "95% confidence sequences", "Pass rate: mutated 6/6, baseline 5/6 over 6 pairs",
		"Composite outcome (a failure is worse than any pass", "mutated won 6 pairs, baseline 0, 0 tied", "18.1 that it is better",
		"could be luck: about 3 more replicas per arm would tell"}

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, res))
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, res))
	html := strings.ReplaceAll(page.String(), "&#39;", "'")
	doc, err := json.Marshal(res)
	require.NoError(t, err)
	rep := Gate{FailOn: []string{"reject"}, MaxRegression: -1}.Check(res)
	gate, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, w := range want {
		assert.Contains(t, md.String(), w, "markdown")
		assert.Contains(t, html, w, "HTML")
		assert.Contains(t, strings.Join(rep.Statistics, "\n"), w, "gate")
	}
	step := RuleStep(res.RuleText, d.Step)
	require.NotEmpty(t, step)
	assert.Contains(t, html, step, "the HTML states the deciding rule")
	assert.Equal(t, d.Step, rep.Step)
	assert.Equal(t, step, rep.Rule, "the gate states the deciding rule")
	for _, key := range []string{`"e_worse"`, `"e_better"`, `"interval"`, `"alpha"`, `"threshold":60`, `"composite_test"`, `"shift"`, `"more":{"replicas":3`} {
		assert.Contains(t, string(doc), key, "JSON")
		assert.Contains(t, string(gate), key, "gate --json")
	}
	assert.Contains(t, string(doc), `"rule_text"`)

	// Dispatch 7 in the mutated arm: not run in every format.
	rows := squeezeCells(md.String())
	assert.Contains(t, rows, "| 7 | acceptance | 6 / 0 | 0 / did not run | 0 / did not run |", "markdown medians")
	assert.Regexp(t, `\| 7 \| acceptance \| 1\.00 \| completed/PASS \| did not run \| - \|`, rows, "markdown determinism")
	assert.Contains(t, html, ">did not run · -<", "HTML heatmap")
	var back struct {
		Dispatches []map[string]any `json:"dispatches"`
		Noise      struct {
			Dispatches []map[string]any `json:"dispatches"`
		} `json:"noise_floor"`
	}
	require.NoError(t, json.Unmarshal(doc, &back))
	last := back.Noise.Dispatches[len(back.Noise.Dispatches)-1]
	assert.Equal(t, 7.0, last["replay_of"])
	assert.Equal(t, 0.0, last["mutated_runs"])
	assert.Nil(t, last["mutated"], "JSON: no determinism for an arm that did not run")
	assert.Nil(t, last["mutated_mode"])
	assert.Equal(t, 1.0, last["baseline"])
	per := back.Dispatches[len(back.Dispatches)-1]
	assert.Nil(t, per["mutated_duration_s"], "JSON: no median for an arm that did not run")
	assert.NotNil(t, per["baseline_duration_s"])

	// A saved result reads back and renders the same.
	var saved Result
	require.NoError(t, json.Unmarshal(doc, &saved))
	var again bytes.Buffer
	require.NoError(t, WriteMarkdown(&again, &saved))
	assert.Equal(t, md.String(), again.String(), "replay report renders a saved result as the run did")
}

// squeezeCells drops the padding of markdown table cells ("| 7    | a |" becomes
// "| 7 | a |"), so a test can name a row by its values.
func squeezeCells(md string) string {
	return regexp.MustCompile(` +\|`).ReplaceAllString(md, " |")
}
