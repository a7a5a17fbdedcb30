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
