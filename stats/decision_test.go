package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func arm(pass int, n int, metric ...float64) Arm {
	a := Arm{Metric: metric}
	for i := range n {
		a.Passed = append(a.Passed, i < pass)
	}
	return a
}

func TestDecideFollowsTheRuleInOrder(t *testing.T) {
	t.Parallel()
	r := DefaultRule()
	ten := func(v float64) []float64 {
		out := make([]float64, 10)
		for i := range out {
			out[i] = v + float64(i)
		}
		return out
	}
	cases := []struct {
		name      string
		base, mut Arm
		verdict   string
		step      int
	}{
		{"a lost pass is no significant drop; a far lower metric is adopted", arm(5, 5, 100, 100, 100, 100, 100), arm(4, 5, 1, 1, 1, 1, 1), Adopt, 4},
		{"4/10 against 6/10 is no difference", arm(6, 10), arm(4, 10), Skip, 5},
		{"a collapse of the pass rate is rejected", arm(10, 10), arm(1, 10), Reject, 1},
		{"a clear pass-rate gain is adopted", arm(0, 10), arm(10, 10), Adopt, 3},
		{"a vague pass-rate gain expands", arm(3, 5), arm(4, 5), Expand, 5},
		{"a vague pass-rate gain at the cap is skipped", arm(7, 10), arm(8, 10), Skip, 5},
		{"a much slower metric is rejected", arm(10, 10, ten(10)...), arm(10, 10, ten(50)...), Reject, 2},
		{"a much faster metric is adopted", arm(10, 10, ten(50)...), arm(10, 10, ten(10)...), Adopt, 4},
		{"overlapping metrics are no difference", arm(10, 10, ten(10)...), arm(10, 10, ten(11)...), Skip, 5},
		{"a clear cut on three replicas cannot be significant", arm(3, 3, 10, 11, 12), arm(3, 3, 2, 3, 4), Expand, 5},
	}
	for _, c := range cases {
		d := r.Decide(c.base, c.mut)
		assert.Equal(t, c.verdict, d.Verdict, "%s: %s", c.name, d.Reason)
		assert.Equal(t, c.step, d.Step, "%s: %s", c.name, d.Reason)
		assert.NotEmpty(t, d.Reason)
	}
}

// Failed replicas are their own outcome: their metric values (0 here) never
// enter the comparison.
func TestDecideComparesTheMetricOverPassingReplicasOnly(t *testing.T) {
	t.Parallel()
	base := Arm{Passed: []bool{true, true, true, true, true, true, false, false, false, false}, Metric: []float64{10, 11, 12, 13, 14, 15, 0, 0, 0, 0}}
	mut := Arm{Passed: []bool{true, true, true, true, true, true, true, true, true, true}, Metric: []float64{10, 11, 12, 13, 14, 15, 10, 11, 12, 13}}
	d := DefaultRule().Decide(base, mut)
	assert.Equal(t, 6, d.Metric.Baseline.N)
	assert.Equal(t, 12.5, d.Metric.Baseline.Median)
	assert.NotEqual(t, Reject, d.Verdict, d.Reason)
}

// A trade-off (passes more, significantly slower) is never adopted.
func TestDecideDoesNotAdoptATradeOff(t *testing.T) {
	t.Parallel()
	base := arm(2, 20, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	mutMetric := make([]float64, 20)
	for i := range mutMetric {
		mutMetric[i] = 100 + float64(i)
	}
	d := DefaultRule().Decide(base, arm(20, 20, mutMetric...))
	assert.NotEqual(t, Adopt, d.Verdict, d.Reason)
}

// The margin: a small significant drop is rejected without one, not with one.
func TestDecideMargin(t *testing.T) {
	t.Parallel()
	base, mut := arm(20, 20), arm(20, 20)
	for i := range 20 {
		base.Metric = append(base.Metric, 100+float64(i))
		mut.Metric = append(mut.Metric, 112+float64(i))
	}
	r := DefaultRule()
	assert.Equal(t, Reject, r.Decide(base, mut).Verdict)
	r.Margin = 0.25
	assert.NotEqual(t, Reject, r.Decide(base, mut).Verdict)
	assert.Error(t, Rule{Alpha: 0.05, Margin: -1, Resamples: 1}.Validate())
	assert.NoError(t, DefaultRule().Validate())
}

func TestRuleTextNamesItsParameters(t *testing.T) {
	t.Parallel()
	text := DefaultRule().Text()
	for _, want := range []string{"1. Pass rate worse", "Boschloo", "Wilcoxon-Mann-Whitney", "alpha = 0.05", "Sidak", "Fixed design"} {
		assert.Contains(t, text, want)
	}
	seq := DefaultRule().Sequential(3, 10).Text()
	assert.Contains(t, seq, "obrien-fleming")
	assert.Contains(t, seq, "[3 6 10]")
}

func TestSequentialLevelsSumToAlpha(t *testing.T) {
	t.Parallel()
	for _, fn := range SpendingNames() {
		for _, looks := range [][]int{{3, 6, 10}, {5, 10, 20}, {10}, {2, 4, 8, 16, 32}} {
			sum := 0.0
			for _, l := range lookLevels(fn, 0.05, looks, 2) {
				sum += l
			}
			assert.InDelta(t, 0.05, sum, 1e-12, "%s %v", fn, looks)
		}
	}
	assert.Equal(t, []int{3, 6, 10}, PlannedLooks(3, 10))
	assert.Equal(t, []int{10}, PlannedLooks(10, 10))
	assert.Equal(t, []int{5, 10, 20}, PlannedLooks(5, 20))
}

// The band cases of Crucible's harness tests, with Crucible's verdicts in the
// comments and this rule's, which tests instead of comparing bands: it adopts
// the touching bands at 10 (Mann-Whitney one-sided p = 0.011) that Crucible
// skips, and expands on the outlier case Crucible adopts (p = 0.028 at n=5).
func TestDecideOnCrucibleBandCases(t *testing.T) {
	t.Parallel()
	r := DefaultRule()
	seq := func(start, step float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = start + step*float64(i)
		}
		return out
	}
	cases := []struct {
		name      string
		base, mut []float64
		want      string
	}{
		{"touch at 5", seq(40, 15, 5), seq(40, 5, 5), Expand},                             // Crucible: expand
		{"touch at 10", seq(40, 15, 10), seq(40, 5, 10), Adopt},                           // Crucible: skip
		{"outlier", []float64{90, 92, 94, 96, 98}, []float64{40, 42, 44, 46, 95}, Expand}, // Crucible: adopt
	}
	for _, c := range cases {
		all := func(n int) Arm { return arm(n, n) }
		base, mut := all(len(c.base)), all(len(c.mut))
		base.Metric, mut.Metric = c.base, c.mut
		d := r.Decide(base, mut)
		assert.Equal(t, c.want, d.Verdict, "%s: %s", c.name, d.Reason)
	}
}

// A decision with missing statistics (no passing replica, nothing detectable)
// still encodes as JSON, and reads back the same.
func TestDecisionJSONRoundTripsMissingStatistics(t *testing.T) {
	t.Parallel()
	d := DefaultRule().Decide(arm(0, 2, 1, 1), arm(0, 2, 1, 1))
	data, err := json.Marshal(d)
	assert.NoError(t, err)
	var back Decision
	assert.NoError(t, json.Unmarshal(data, &back))
	assert.True(t, math.IsNaN(back.Detectable.PassRateDrop))
	assert.Equal(t, d.Verdict, back.Verdict)
}

// The smallest detectable effects are said in words in every case, never as a
// bare "none possible": with too few replicas, how many would do.
func TestDetectableWords(t *testing.T) {
	t.Parallel()
	few := DefaultRule().Decide(arm(2, 3, 10, 11, 12), arm(2, 3, 10, 11, 12))
	assert.True(t, math.IsNaN(few.Detectable.PassRateDrop))
	assert.Equal(t, DetectTooFew, few.Detectable.PassRateNote)
	need := few.Detectable.ReplicasForDrop
	require.Greater(t, need, 3)
	z := normalQuantile(1-few.EndpointLevel/2) + normalQuantile(Power)
	assert.False(t, math.IsNaN(DetectableDrop(2.0/3, need, z)), "%d replicas detect a drop to 0", need)
	assert.True(t, math.IsNaN(DetectableDrop(2.0/3, need-1, z)), "%d do not", need-1)
	words := few.Detectable.Words()
	assert.Contains(t, words, fmt.Sprintf("Smallest effects 3 replicas per arm detect with 80%% power (approximate): no pass-rate drop, not even to 0 (that needs at least %d replicas per arm)", need))
	assert.NotContains(t, words, "none possible")

	none := DefaultRule().Decide(arm(0, 10), arm(0, 10))
	assert.Contains(t, none.Detectable.Words(), "the baseline passed none of its replicas")
	assert.Contains(t, none.Detectable.Words(), "an arm has no passing replica")

	flat := DefaultRule().Decide(arm(10, 10, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5), arm(10, 10, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5))
	assert.Contains(t, flat.Detectable.Words(), "a pass-rate drop of ")
	assert.Contains(t, flat.Detectable.Words(), "no spread")

	data, err := json.Marshal(few)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"text":"Smallest effects 3 replicas per arm detect`)
	var back Decision
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, words, back.Detectable.Words(), "the words survive a saved result")
}
