package stats

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
	cases := []struct {
		name      string
		base, mut Arm
		verdict   string
		step      int
	}{
		{"a lost pass is rejected even with a large cut", arm(5, 5, 100, 100, 100, 100, 100), arm(4, 5, 1, 1, 1, 1, 1), Reject, 1},
		{"two replicas are too few", arm(2, 2, 10, 10), arm(2, 2, 1, 1), Expand, 2},
		{"a clear pass-rate gain is adopted", arm(0, 10), arm(10, 10), Adopt, 3},
		{"a vague pass-rate gain expands", arm(3, 5), arm(4, 5), Expand, 3},
		{"a vague pass-rate gain at the cap is skipped", arm(7, 10), arm(8, 10), Skip, 3},
		{"no metric, equal rates", arm(5, 5), arm(5, 5), Skip, 4},
		{"a 10% cut is under the threshold", arm(5, 5, 100, 100, 100, 100, 100), arm(5, 5, 90, 90, 90, 90, 90), Skip, 5},
		{"a cut for a minority only", arm(5, 5, 10, 10, 10, 10, 10), arm(5, 5, 1, 2, 20, 20, 20), Skip, 5},
		{"a bare majority expands", arm(5, 5, 10, 10, 10, 10, 10), arm(5, 5, 1, 1, 1, 20, 20), Expand, 7},
		{"touching bands expand", arm(6, 6, 5, 5, 10, 10, 10, 10), arm(6, 6, 1, 1, 1, 6, 9, 9), Expand, 7},
		{"a clear cut is adopted", arm(6, 6, 10, 11, 12, 10, 11, 12), arm(6, 6, 2, 3, 4, 2, 3, 4), Adopt, 8},
		{"a clear cut on three replicas is not significant", arm(3, 3, 10, 11, 12), arm(3, 3, 2, 3, 4), Expand, 7},
	}
	for _, c := range cases {
		d := r.Decide(c.base, c.mut)
		assert.Equal(t, c.verdict, d.Verdict, "%s: %s", c.name, d.Reason)
		assert.Equal(t, c.step, d.Step, "%s: %s", c.name, d.Reason)
		assert.NotEmpty(t, d.Reason)
	}
}

func TestRuleTextNamesItsParameters(t *testing.T) {
	t.Parallel()
	text := DefaultRule().Text()
	for _, want := range []string{"1. Correctness gate", "15%", "Wilson", "Fisher", "Mann-Whitney", "seed 1", "8. Otherwise adopt."} {
		assert.Contains(t, text, want)
	}
}

// The band cases of Crucible's harness tests (its expected verdicts in the
// comments): ours must never be laxer (never adopt where it does not).
func TestDecideIsNoLaxerThanCrucibleOnItsBandCases(t *testing.T) {
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
		max       int
		want      string
	}{
		// Touching bands (mutated Q3 = baseline Q1 = 55) at n=5: expand there.
		{"touch at 5", seq(40, 15, 5), seq(40, 5, 5), 10, Expand},
		// The same touch at n=10 (73.75): skip there, as 10 is its cap.
		{"touch at 10", seq(40, 15, 10), seq(40, 5, 10), 10, Skip},
		// An outlier (95) with separated IQR bands: adopt there; here Mann-Whitney
		// p is 0.06 at n=5, so we ask for more replicas.
		{"outlier", []float64{90, 92, 94, 96, 98}, []float64{40, 42, 44, 46, 95}, 10, Expand},
	}
	for _, c := range cases {
		r.MaxReplicas = c.max
		all := func(n int) Arm { return arm(n, n) }
		base, mut := all(len(c.base)), all(len(c.mut))
		base.Metric, mut.Metric = c.base, c.mut
		d := r.Decide(base, mut)
		assert.Equal(t, c.want, d.Verdict, "%s: %s", c.name, d.Reason)
	}
}
