package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/stats"
)

var errBad = errors.New("bad")

// fakeResult is a replicated result with the given pass counts per arm of n
// replicas and a decision by the default rule.
func fakeResult(basePass, mutPass, n int, baseMed, mutMed float64) *replicate.Result {
	arm := func(k int, med float64) stats.Arm {
		a := stats.Arm{}
		for i := range n {
			a.Passed = append(a.Passed, i < k)
			a.Metric = append(a.Metric, med+float64(i%2))
		}
		return a
	}
	b, m := arm(basePass, baseMed), arm(mutPass, mutMed)
	d := stats.DefaultRule().Decide(b, m)
	res := &replicate.Result{Session: "s1", Metric: replicate.MetricDuration, Decision: d}
	for i := range n {
		res.Replicas = append(res.Replicas,
			&replicate.Replica{Arm: replicate.Baseline, Index: i + 1, Passed: b.Passed[i], DurationS: b.Metric[i]},
			&replicate.Replica{Arm: replicate.Mutated, Index: i + 1, Passed: m.Passed[i], DurationS: m.Metric[i]})
	}
	res.Metrics = []replicate.MetricCompare{{Metric: replicate.MetricDuration, Decides: true,
		Baseline: stats.Summary{Median: baseMed}, Mutated: stats.Summary{Median: mutMed}}}
	return res
}

func corpusDirs(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "runs", n), 0o755))
	}
	return root
}

func request(root string, calls *[]string, results map[string]*replicate.Result) Request {
	return Request{
		Args: []string{"runs/*"}, Cwd: root, Out: "out",
		Settings: Settings{Mutations: []string{"a.md=b.md"}, MutationHash: "abc", Replicas: 3, Agent: "builtin:sim", Metric: replicate.MetricDuration},
		Run: func(_ context.Context, dir string) (*replicate.Result, string, error) {
			*calls = append(*calls, filepath.Base(dir))
			if r, ok := results[filepath.Base(dir)]; ok {
				return r, dir + "/report.md", nil
			}
			return nil, "", errors.New("no manifest in " + dir)
		},
		Fatal: func(err error) bool { return errors.Is(err, errBad) },
	}
}

func TestRunRowsAggregateAndResume(t *testing.T) {
	t.Parallel()
	root := corpusDirs(t, "c", "a", "b")
	results := map[string]*replicate.Result{"a": fakeResult(3, 3, 3, 100, 50), "c": fakeResult(3, 3, 3, 100, 100)}
	var calls []string
	res, err := Run(request(root, &calls, results))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, calls, "sorted, deterministic order")
	require.Len(t, res.Rows, 3)
	assert.Equal(t, "error", res.Rows[1].Verdict())
	assert.Contains(t, res.Rows[1].Error, "no manifest")
	a := res.Aggregate
	assert.Equal(t, 6, a.BaselinePass.Passed)
	assert.Equal(t, 6, a.BaselinePass.N)
	assert.Equal(t, 1, a.Decisions["error"])
	assert.Equal(t, stats.Undecided, a.Verdict, "an error row leaves the corpus undecided")
	assert.InDelta(t, -0.25, a.MedianChange, 1e-9, "median of -50% and 0%")
	// The pooled rates carry their confidence sequences (stats.RateCS at 1 - alpha).
	pooled := aggregate([]Row{{Decision: &stats.Decision{Verdict: stats.Undecided,
		BaselinePass: stats.RateStats{Passed: 0, N: 6}, MutatedPass: stats.RateStats{Passed: 3, N: 6}}}}, stats.Rule{Alpha: 0.05})
	assert.Equal(t, stats.RateCS(3, 3, 0.05), pooled.MutatedPass.Interval)
	first, err := os.ReadFile(filepath.Join(root, "out", JSONFile))
	require.NoError(t, err)

	calls = nil
	again, err := Run(request(root, &calls, results))
	require.NoError(t, err)
	assert.Empty(t, calls, "a rerun with the same arguments skips every finished pipeline")
	second, err := os.ReadFile(filepath.Join(root, "out", JSONFile))
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second))
	assert.Equal(t, res.Aggregate, again.Aggregate)

	other := request(root, &calls, results)
	other.Settings.Replicas = 5
	log0, _ := os.ReadFile(filepath.Join(root, "out", LogFile))
	_, err = Run(other)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "--replicas 3 (now 5)")
	log1, _ := os.ReadFile(filepath.Join(root, "out", LogFile))
	assert.Equal(t, log0, log1, "a refused run writes nothing")
	assert.Empty(t, calls)

	// The corpus decision is at the run's --alpha (issue 40): another alpha
	// is other arguments, and the default alpha given explicitly is not.
	strict := request(root, &calls, results)
	strict.Settings.Alpha = 0.01
	_, err = Run(strict)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "--alpha 0.05 (now 0.01)")
	explicit := request(root, &calls, results)
	explicit.Settings.Alpha = stats.DefaultRule().Alpha
	same, err := Run(explicit)
	require.NoError(t, err, "a log written without alpha is the default alpha's")
	assert.Empty(t, calls)
	assert.Equal(t, res.Aggregate, same.Aggregate)

	fresh := corpusDirs(t, "a")
	strict = request(fresh, &calls, results)
	strict.Settings.Alpha = 0.01
	res, err = Run(strict)
	require.NoError(t, err)
	assert.Equal(t, 0.01, res.Rule.Alpha, "the corpus decision's rule carries --alpha")
	assert.Equal(t, stats.RateCS(3, 0, 0.01), res.Aggregate.BaselinePass.Interval, "its confidence sequences are at 1 - alpha")
}

func TestRunStopsOnFatalAndInterruptWithoutLoggingIt(t *testing.T) {
	t.Parallel()
	root := corpusDirs(t, "a", "b")
	var calls []string
	r := request(root, &calls, map[string]*replicate.Result{"a": fakeResult(3, 3, 3, 10, 5)})
	r.Run = func(_ context.Context, dir string) (*replicate.Result, string, error) {
		calls = append(calls, filepath.Base(dir))
		if filepath.Base(dir) == "b" {
			return nil, "", errBad
		}
		return fakeResult(3, 3, 3, 10, 5), "", nil
	}
	_, err := Run(r)
	require.ErrorIs(t, err, errBad)
	lg, err := openLog(filepath.Join(root, "out"), LogFile, r.Settings)
	require.NoError(t, err)
	assert.Len(t, lg.done, 1, "only the finished pipeline is in the log")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Ctx = ctx
	_, err = Run(r)
	require.ErrorIs(t, err, context.Canceled)
}

// The corpus decides by stratified tests, pipelines as strata: identical
// pipelines with a no-op change decide nothing, a collapse over the corpus is
// rejected though no 3-replica pipeline could reject it alone, a faster
// template is adopted, and a failed pipeline leaves the corpus undecided.
func TestDecideRule(t *testing.T) {
	t.Parallel()
	rows := func(k, bp, mp int, bm, mm float64) []Row {
		var out []Row
		for range k {
			out = append(out, rowOf("/p", "k", "", fakeResult(bp, mp, 3, bm, mm)))
		}
		return out
	}
	cases := []struct {
		name string
		rows []Row
		want string
		step int
	}{
		{"five identical pipelines, no-op", rows(5, 3, 3, 10, 10), stats.Undecided, 4},
		{"a collapse over five pipelines", rows(5, 3, 0, 10, 10), stats.Reject, 1},
		{"faster over five pipelines", rows(5, 3, 3, 10, 5), stats.Adopt, 3},
		{"slower over five pipelines", rows(5, 3, 3, 5, 10), stats.Reject, 2},
		{"one errors", append(rows(1, 3, 3, 10, 10), Row{Pipeline: "/x", Error: "boom"}), stats.Undecided, 0},
	}
	for _, c := range cases {
		a := aggregate(c.rows, stats.DefaultRule())
		assert.Equal(t, c.want, a.Verdict, "%s: %s", c.name, a.Reason)
		assert.Equal(t, c.step, a.Step, "%s: %s", c.name, a.Reason)
	}
	for _, r := range rows(1, 3, 0, 10, 10) {
		assert.NotEqual(t, stats.Reject, r.Verdict(), "one pipeline of 3 replicas cannot reject alone")
	}
	a := aggregate(rows(5, 3, 0, 10, 10), stats.DefaultRule())
	require.NotNil(t, a.Decision)
	assert.Contains(t, a.Decision.Pass.Test, "pairs within each pipeline")
}

func TestExpand(t *testing.T) {
	t.Parallel()
	root := corpusDirs(t, "b", "a")
	dirs, err := Expand([]string{"runs/b", "runs/*", filepath.Join(root, "runs", "a")}, root)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(root, "runs", "a"), filepath.Join(root, "runs", "b")}, dirs)
	for _, bad := range [][]string{nil, {"nothing/*"}, {"runs/zzz"}} {
		_, err := Expand(bad, root)
		require.ErrorIs(t, err, ErrBadOptions, "%v", bad)
	}
}

func TestLogToleratesTornLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := Settings{MutationHash: "h", Replicas: 2}
	lg, err := openLog(dir, LogFile, s)
	require.NoError(t, err)
	require.NoError(t, lg.append(Row{Pipeline: "/a", Key: s.Key("/a"), Error: "x"}))
	f, err := os.OpenFile(lg.path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"pipeline","row":{"pipel`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	lg, err = openLog(dir, LogFile, s)
	require.NoError(t, err)
	assert.Len(t, lg.done, 1)
	require.NoError(t, lg.append(Row{Pipeline: "/b", Key: s.Key("/b"), Error: "y"}))
	lg, err = openLog(dir, LogFile, s)
	require.NoError(t, err)
	assert.Len(t, lg.done, 2, "the line after a torn one is read")
}

func TestReadResultAndGate(t *testing.T) {
	t.Parallel()
	root := corpusDirs(t, "a", "b")
	var calls []string
	res, err := Run(request(root, &calls, map[string]*replicate.Result{"a": fakeResult(3, 3, 3, 10, 12), "b": fakeResult(3, 2, 3, 10, 10)}))
	require.NoError(t, err)
	assert.True(t, IsResultFile(res.Files.JSON))
	back, err := ReadResult(res.Files.JSON)
	require.NoError(t, err)
	assert.Equal(t, stats.Undecided, back.Aggregate.Verdict, "one lost pass in six is no evidence of a drop")
	rep := Check(replicate.Gate{FailOn: []string{stats.Undecided}, MaxRegression: 0.1}, back)
	require.Len(t, rep.Failures, 2, "%v", rep.Failures)
	assert.InDelta(t, 1.0/6, rep.PassRateDrop, 1e-9)
	assert.InDelta(t, 0.1, rep.MetricIncrease, 1e-9, "median of +20% and 0%")
	pass := Check(replicate.Gate{FailOn: []string{stats.Adopt}, MaxRegression: -1, AllowUndecided: true}, back)
	assert.Empty(t, pass.Failures)
	undecided := Check(replicate.Gate{FailOn: []string{stats.Adopt}, MaxRegression: -1}, back)
	require.Len(t, undecided.Failures, 1, "an undecided corpus fails the gate unless allowed")
	assert.Contains(t, undecided.Failures[0], "--allow-undecided")
	require.NoError(t, os.WriteFile(filepath.Join(root, "x.json"), []byte(`{"format":"replay-corpus/9"}`), 0o644))
	_, err = ReadResult(filepath.Join(root, "x.json"))
	require.ErrorIs(t, err, replicate.ErrNoResult)
	var doc map[string]any
	data, _ := os.ReadFile(res.Files.JSON)
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, Format, doc["format"])
}

func FuzzParseLog(f *testing.F) {
	s := Settings{MutationHash: "h", Replicas: 2, Agent: "builtin:sim"}
	f.Add(string(headerLine(s)) + `{"kind":"pipeline","row":{"pipeline":"/a","key":"k"}}` + "\n")
	f.Add(string(headerLine(s)) + `{"kind":"pipel`)
	f.Add(`{"kind":"corpus","settings":{"replicas":3}}` + "\n")
	f.Add("\n\n")
	f.Fuzz(func(t *testing.T, data string) {
		done, err := parseLog("log", []byte(data), s)
		if err == nil {
			for k, r := range done {
				if k != r.Key || k == "" {
					t.Fatalf("row under key %q has key %q", k, r.Key)
				}
			}
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	f.Add(`{"format":"replay-corpus/1","aggregate":{"verdict":"adopt"},"pipelines":[{"pipeline":"/a","key":"k"}]}`)
	f.Add(`{"format":"replay-corpus/2"}`)
	f.Add(`{"decision":{"verdict":"reject"}}`)
	f.Fuzz(func(t *testing.T, data string) {
		res, err := decodeResult("r.json", []byte(data))
		if err == nil && (res.Format != Format || res.Aggregate.Verdict == "" || !IsResult([]byte(data))) {
			t.Fatalf("accepted %q as a corpus result", data)
		}
	})
}

// With --until-decided each pipeline of a corpus runs --max-replicas replicas per
// arm in one look: the strata of the stratified test never have data-dependent
// sizes. A fixed design is left as it is.
func TestPipelineDesignIsFixed(t *testing.T) {
	t.Parallel()
	seq := PipelineDesign(replicate.Request{Replicas: 3, UntilDecided: true, MaxReplicas: 10})
	assert.False(t, seq.UntilDecided)
	assert.Equal(t, 10, seq.Replicas)
	fixed := PipelineDesign(replicate.Request{Replicas: 5, MaxReplicas: 10})
	assert.False(t, fixed.UntilDecided)
	assert.Equal(t, 5, fixed.Replicas)
}
