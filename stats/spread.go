package stats

import (
	"math"
	"slices"
)

// sortedQuantile is the p-quantile of s (sorted, not empty) by linear
// interpolation between order statistics (R's type 7, Python's
// statistics.quantiles method="inclusive"): the rule Crucible's harness draws
// its bands with.
func sortedQuantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Summary is a sample's median and quartiles.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
}

// IQR is Q3 - Q1.
func (s Summary) IQR() float64 { return s.Q3 - s.Q1 }

// Summarize returns the median and quartiles of xs (type-7 quantiles).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{Median: math.NaN(), Q1: math.NaN(), Q3: math.NaN()}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{N: len(s), Median: sortedQuantile(s, 0.5), Q1: sortedQuantile(s, 0.25), Q3: sortedQuantile(s, 0.75)}
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
