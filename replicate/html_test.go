package replicate

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/stats"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// hostile is run text that must reach the page only escaped.
const hostile = `<script>alert("x")</script>&<img src=x onerror=alert(1)>`

// sampleResult is a replicated A/B result measured the way Run measures one:
// six replicas per arm, the mutation makes one dispatch's review fail, the
// baseline is noisy on another, and run text tries to inject markup.
func sampleResult(t testing.TB) *Result {
	t.Helper()
	var reps []*Replica
	for i := 1; i <= 6; i++ {
		for _, arm := range []string{Baseline, Mutated} {
			r := &Replica{Arm: arm, Index: i, Session: fmt.Sprintf("%s-%02d", arm[:1], i), Verdict: "PASS", Passed: true,
				DurationS: 40 + float64(i*i%7), GateRounds: 2, Findings: i % 3, InputChars: 9000 + 37*i, OutputChars: 2100 - 11*i}
			review := "PASS"
			if arm == Mutated {
				r.DurationS, r.GateRounds, review = 31+float64(i%4), 1, "FAIL"
			}
			if arm == Baseline && i == 4 {
				r.Passed, r.Verdict = false, "FAIL"
			}
			build := "PASS"
			if arm == Baseline && i%3 == 0 {
				build = "BLOCKED"
			}
			r.Dispatches = []DispatchMetric{
				{ReplayOf: 3, Role: "builder", Status: "completed", Verdict: build},
				{ReplayOf: 5, Role: hostile, Status: "completed", Verdict: review},
				{ReplayOf: 7, Role: "acceptance", Status: "completed", Verdict: "PASS"},
			}
			reps = append(reps, r)
		}
	}
	req := Request{Metric: MetricDuration, Rule: stats.DefaultRule()}
	res := &Result{Generated: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), Session: "sess-1", Jobs: 2,
		Mutations: []string{"build-reviewer-prompt.md=" + hostile}, Metric: req.Metric, Rule: req.Rule,
		RuleText: req.Rule.Text(), Replicas: reps, Warnings: []string{"warning " + hostile}}
	base, mut := arms(reps, req.Metric)
	res.Decision = req.Rule.Decide(base, mut)
	res.Metrics = compareMetrics(req, reps)
	res.Noise = noiseOf(reps, 0.05)
	res.Dispatches = perDispatch(reps)
	return res
}

func TestWriteHTMLGolden(t *testing.T) {
	t.Parallel()
	res := sampleResult(t)
	var a, b bytes.Buffer
	require.NoError(t, WriteHTML(&a, res))
	require.NoError(t, WriteHTML(&b, sampleResult(t)))
	assert.Equal(t, a.String(), b.String(), "the same result gives the same bytes")
	page := a.String()
	assert.NotContains(t, page, "<script", "run text is escaped, and the page has no script")
	assert.NotContains(t, page, "<img")
	assert.Contains(t, page, "&lt;script&gt;")
	for _, forbidden := range []string{"http://", "https://", "src=\"", "@import", "url("} {
		assert.NotContains(t, page, forbidden, "self-contained: nothing is fetched")
	}
	assert.Equal(t, len(res.Metrics), strings.Count(page, `<svg class="chart"`), "one chart per metric")
	assert.Contains(t, page, `class="verdict `+res.Decision.Verdict+`"`)
	assert.Contains(t, page, "Dispatch 5 (", "the first divergence is the review the mutation fails")
	assert.Contains(t, page, "First run-to-run disagreement: dispatch 3 (builder)")
	golden := filepath.Join("testdata", "html", "report.golden.html")
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, a.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./replicate -run TestWriteHTMLGolden -update to create it")
	assert.Equal(t, string(want), page)
}

func TestWriteHTMLEdgeCases(t *testing.T) {
	t.Parallel()
	res := sampleResult(t)
	for _, r := range res.Replicas {
		r.DurationS = 12 // every value equal: the axis still has a width
	}
	res.Noise = Noise{}
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, res))
	assert.NotContains(t, buf.String(), "NaN")
	assert.Contains(t, buf.String(), "No dispatch's outcome differs significantly")
	assert.Contains(t, buf.String(), "Every replica of each arm agrees")

	buf.Reset()
	require.NoError(t, WriteHTML(&buf, &Result{Metrics: []MetricCompare{{Metric: MetricDuration}}, Decision: stats.Decision{Verdict: "skip"}}))
	assert.Contains(t, buf.String(), "no values")
	assert.NotContains(t, buf.String(), "NaN")
}

// FuzzWriteHTML renders any result a saved file can hold: no panic, no NaN in
// the drawing, and the run's text never reaches the page as markup.
func FuzzWriteHTML(f *testing.F) {
	f.Add(`{"decision":{"verdict":"reject","step":1},"metrics":[{"metric":"duration_s","decides":true}]}`)
	f.Add(`{"decision":{"verdict":"<b>","step":9},"rule_text":"1. x\n\n2.","metrics":[{"metric":"findings"}],` +
		`"replicas":[{"arm":"baseline","findings":3},{"arm":"mutated","findings":-1e300}],` +
		`"noise_floor":{"dispatches":[{"replay_of":1,"role":"<script>","baseline":-2,"mutated":9,"effect":true}]}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var res Result
		if json.Unmarshal([]byte(doc), &res) != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteHTML(&buf, &res); err != nil {
			t.Fatalf("WriteHTML: %v", err)
		}
		if strings.Contains(buf.String(), "NaN") && !strings.Contains(doc, "NaN") {
			t.Fatalf("NaN in the page of %q", doc)
		}
		if strings.Contains(buf.String(), "<script") {
			t.Fatalf("markup from the result reached the page: %q", doc)
		}
	})
}

// BenchmarkWriteHTML renders the report of 100 replicas per arm of a 20-dispatch
// pipeline (the size the benchmark runs).
func BenchmarkWriteHTML(b *testing.B) {
	res := sampleResult(b)
	var reps []*Replica
	for i := 0; i < 100; i++ {
		for _, r := range res.Replicas[:2] {
			c := *r
			c.Index, c.DurationS = i+1, r.DurationS+float64(i%13)
			c.Dispatches = nil
			for d := 0; d < 20; d++ {
				c.Dispatches = append(c.Dispatches, DispatchMetric{ReplayOf: d + 1, Role: "role", Status: "completed", Verdict: []string{"PASS", "FAIL"}[(i+d)%7/6]})
			}
			reps = append(reps, &c)
		}
	}
	res.Replicas, res.Noise = reps, noiseOf(reps, 0.05)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHTML(io.Discard, res); err != nil {
			b.Fatal(err)
		}
	}
}
