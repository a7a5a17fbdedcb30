package replicate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/stats"
)

func resultWith(verdict string, basePass, mutPass, baseMedian, mutMedian float64) *Result {
	return &Result{Metric: MetricDuration, Decision: stats.Decision{Verdict: verdict, Step: 1, Reason: "r",
		BaselinePass: stats.RateStats{Rate: basePass, N: 4, Passed: int(basePass * 4)},
		MutatedPass:  stats.RateStats{Rate: mutPass, N: 4, Passed: int(mutPass * 4)}},
		Metrics: []MetricCompare{{Metric: MetricDuration, Decides: true,
			Baseline: stats.Summary{Median: baseMedian}, Mutated: stats.Summary{Median: mutMedian}}}}
}

func TestGateCheck(t *testing.T) {
	t.Parallel()
	g := Gate{FailOn: []string{"reject"}, MaxRegression: -1}
	assert.NoError(t, g.Check(resultWith("adopt", 1, 1, 10, 5)).Err())
	assert.ErrorIs(t, g.Check(resultWith("reject", 1, 0.5, 10, 10)).Err(), ErrGateFailed)

	g = Gate{MaxRegression: 0.1, AllowUndecided: true}
	rep := g.Check(resultWith("undecided", 1, 0.75, 10, 12))
	assert.InDelta(t, 0.25, rep.PassRateDrop, 1e-12)
	assert.InDelta(t, 0.2, rep.MetricIncrease, 1e-12)
	assert.Len(t, rep.Failures, 2)
	assert.NoError(t, g.Check(resultWith("undecided", 1, 1, 10, 10.5)).Err(), "5% is within 10%")
	assert.NoError(t, Gate{MaxRegression: 0, AllowUndecided: true}.Check(resultWith("skip", 1, 1, 0, 3)).Err(), "no relative change from a zero median")

	// An undecided experiment (or an older result's skip or expand) fails the
	// gate unless allowed: it has shown nothing.
	for _, v := range []string{"undecided", "skip", "expand"} {
		rep := Gate{FailOn: []string{"reject"}, MaxRegression: -1}.Check(resultWith(v, 1, 1, 10, 10))
		require.Len(t, rep.Failures, 1, v)
		assert.Contains(t, rep.Failures[0], "--allow-undecided")
		assert.NoError(t, Gate{FailOn: []string{"reject"}, MaxRegression: -1, AllowUndecided: true}.Check(resultWith(v, 1, 1, 10, 10)).Err(), v)
	}
	assert.NoError(t, g.Check(resultWith("adopt", 1, 1, 10, 10)).Err(), "a decided result passes")

	assert.ErrorIs(t, Gate{FailOn: []string{"maybe"}}.Validate(), ErrBadOptions)
	assert.NoError(t, Gate{FailOn: []string{"", "expand"}}.Validate())
}

func TestReadResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	doc := `{"metric":"duration_s","decision":{"verdict":"reject","step":1,"reason":"x"}}`
	res, err := ReadResult(write("one.json", "\n"+doc+"\n"))
	require.NoError(t, err)
	assert.Equal(t, "reject", res.Decision.Verdict)
	res, err = ReadResult(write("log.jsonl", `{"decision":{"verdict":"adopt"}}`+"\n"+doc+"\n"))
	require.NoError(t, err)
	assert.Equal(t, "reject", res.Decision.Verdict, "the log's last line")

	_, err = ReadResult(write("bad.jsonl", doc+"\n{\"decision\":"))
	assert.ErrorIs(t, err, ErrNoResult)
	assert.Contains(t, err.Error(), "bad.jsonl:2: not a replicated A/B result")
	_, err = ReadResult(write("empty.json", `{}`))
	assert.ErrorContains(t, err, "it holds no decision")
	_, err = ReadResult(filepath.Join(dir, "none.json"))
	assert.ErrorIs(t, err, ErrNoResult)
}

func FuzzReadResult(f *testing.F) {
	for _, s := range []string{`{"decision":{"verdict":"adopt"}}`, "{}\n{\"decision\":{\"verdict\":\"skip\"}}", "", "\n\n", `{"replicas":[null]}`} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "r.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Skip()
		}
		res, err := ReadResult(p)
		if err == nil && res.Decision.Verdict == "" {
			t.Fatalf("%q: a result without a decision was accepted", text)
		}
		if err == nil {
			_ = Gate{FailOn: []string{"reject"}, MaxRegression: 0}.Check(res)
		}
	})
}
