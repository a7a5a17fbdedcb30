package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Quantile returns the p-quantile of xs by linear interpolation between order
// statistics (R's type 7, Python's statistics.quantiles method="inclusive"):
// the rule Crucible's harness draws its bands with. NaN for an empty sample.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedQuantile(s, p)
}

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

// BootstrapMedianDiff returns the percentile bootstrap interval, at confidence
// conf, of median(b) - median(a) from resamples draws with replacement, every draw
// taken from a PCG generator seeded with seed: the same inputs and seed give the
// same interval.
func BootstrapMedianDiff(a, b []float64, resamples int, conf float64, seed uint64) Interval {
	if len(a) == 0 || len(b) == 0 || resamples <= 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	diffs := make([]float64, resamples)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for i := range diffs {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		slices.Sort(ra)
		slices.Sort(rb)
		diffs[i] = sortedQuantile(rb, 0.5) - sortedQuantile(ra, 0.5)
	}
	slices.Sort(diffs)
	alpha := (1 - conf) / 2
	return Interval{Lo: sortedQuantile(diffs, alpha), Hi: sortedQuantile(diffs, 1-alpha)}
}

// MannWhitney is the result of a two-sided Mann-Whitney U test.
type MannWhitney struct {
	// U is the statistic of the first sample: the number of pairs (x from a, y
	// from b) with x > y, ties counting one half (R's W).
	U float64 `json:"u"`
	Z float64 `json:"z"`
	P float64 `json:"p"`
}

// MannWhitneyU tests whether a and b come from the same distribution: ranks with
// ties averaged, the normal approximation with the tie-corrected variance and a
// continuity correction of 0.5 (R's wilcox.test(exact = FALSE, correct = TRUE)),
// used at every sample size so that tied samples, which replicas often are, get
// the same treatment as untied ones. P is 1 when every value is tied.
func MannWhitneyU(a, b []float64) MannWhitney {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{P: math.NaN(), Z: math.NaN(), U: math.NaN()}
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int { return cmpFloat(x.v, y.v) })
	var r1, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	f1, f2, n := float64(n1), float64(n2), float64(n1+n2)
	u := r1 - f1*(f1+1)/2
	mean := f1 * f2 / 2
	variance := f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return MannWhitney{U: u, Z: 0, P: 1}
	}
	d := u - mean
	z := (d - math.Copysign(math.Min(0.5, math.Abs(d)), d)) / math.Sqrt(variance)
	return MannWhitney{U: u, Z: z, P: math.Min(1, 2*normalCDF(-math.Abs(z)))}
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
