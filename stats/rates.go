package stats

import (
	"math"
	"slices"
)

// Interval is a closed interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Overlaps reports whether i and j share at least one point.
func (i Interval) Overlaps(j Interval) bool { return i.Lo <= j.Hi && j.Lo <= i.Hi }

// Contains reports whether x lies in i.
func (i Interval) Contains(x float64) bool { return i.Lo <= x && x <= i.Hi }

// FisherExact returns the two-sided p-value of Fisher's exact test on the 2x2
// table [[a, b], [c, d]] (rows: arms; columns: passed, failed): the sum of the
// hypergeometric probabilities of every table with the same margins that is no
// more likely than the observed one (with R's relative tolerance of 1e-7 for ties).
func FisherExact(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	r1, c1, n := a+b, a+c, a+b+c+d
	lo, hi := max(0, c1-(n-r1)), min(r1, c1)
	logP := func(x int) float64 {
		return lchoose(r1, x) + lchoose(n-r1, c1-x) - lchoose(n, c1)
	}
	observed := logP(a)
	var p float64
	for x := lo; x <= hi; x++ {
		if lp := logP(x); lp <= observed+math.Log1p(1e-7) {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

// lchoose is log(n choose k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Holm returns Holm's step-down adjusted p-values of ps, in their order: the
// family-wise error of calling every adjusted p-value below alpha significant is
// at most alpha.
func Holm(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(ps[a], ps[b]) })
	out := make([]float64, len(ps))
	running := 0.0
	for rank, i := range idx {
		adj := math.Min(1, float64(len(ps)-rank)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}
