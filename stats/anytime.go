package stats

import (
	"math"
	"slices"
)

// Anytime-valid tests and confidence sequences.
//
// Every test here is a nonnegative martingale under its null hypothesis that
// starts at 1 (an e-process): by Ville's inequality the chance that it ever
// reaches 1/a, at any number of replicas, is at most a. So a user may look after
// every replica, stop when they like, or add replicas to a finished experiment,
// and the chance of a false decision stays at most alpha. The tests are on
// paired replicas: replica i of the baseline against replica i of the mutated
// arm. When the arms do not differ, the two replicas of a pair are exchangeable,
// so of the pairs that are not tied, each is won by either arm with chance 1/2,
// independently of the others and of the ties, whatever the pass rate, the
// pipeline (a corpus's strata) or the distribution of the metric.

// SignE is the e-value of a one-sided mixture test that wins are more likely
// than losses, after w wins and l losses (ties left out): the likelihood ratio
// of Bernoulli(p) against Bernoulli(1/2), averaged over p uniform on [1/2, 1],
//
//	E = 2^(n+1) * w! l! / (n+1)! * P(Binomial(n+1, 1/2) <= w),  n = w + l.
//
// It depends on the counts only, not their order, and is 1 before any pair.
func SignE(w, l int) float64 {
	if w < 0 || l < 0 {
		return math.NaN()
	}
	n := w + l
	lnB := lgammaInt(w+1) + lgammaInt(l+1) - lgammaInt(n+2)
	return math.Exp(float64(n+1)*math.Ln2 + lnB + logBinomCDFHalf(w, n+1))
}

// logFact holds ln k! for small k (ln Gamma(k+1)), the e-values' hot path.
var logFact = func() []float64 {
	t := make([]float64, 4097)
	for k := 1; k < len(t); k++ {
		t[k] = t[k-1] + math.Log(float64(k))
	}
	return t
}()

// lgammaInt is ln Gamma(k) of a positive whole k.
func lgammaInt(k int) float64 {
	if k >= 1 && k-1 < len(logFact) {
		return logFact[k-1]
	}
	v, _ := math.Lgamma(float64(k))
	return v
}

// logBinomCDFHalf is ln P(Binomial(m, 1/2) <= k).
func logBinomCDFHalf(k, m int) float64 {
	if k >= m {
		return 0
	}
	if k < 0 {
		return math.Inf(-1)
	}
	// log-sum-exp of ln C(m, j) for j <= k, minus m ln 2.
	terms := make([]float64, k+1)
	hi := math.Inf(-1)
	for j := 0; j <= k; j++ {
		terms[j] = lgammaInt(m+1) - lgammaInt(j+1) - lgammaInt(m-j+1)
		hi = math.Max(hi, terms[j])
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - hi)
	}
	return hi + math.Log(s) - float64(m)*math.Ln2
}

// betaMixLogE is ln of the uniform-mixture e-value against "the success rate
// is q" after w successes and l failures: B(w+1, l+1) / (q^w (1-q)^l).
func betaMixLogE(w, l int, q float64) float64 {
	lnB := lgammaInt(w+1) + lgammaInt(l+1) - lgammaInt(w+l+2)
	lq := 0.0
	if w > 0 {
		lq += float64(w) * math.Log(q)
	}
	if l > 0 {
		lq += float64(l) * math.Log1p(-q)
	}
	return lnB - lq
}

// RateCS is a confidence sequence for a success rate after w successes and l
// failures at confidence 1 - a: the rates q whose uniform-mixture e-value
// stays below 1/a. It covers the true rate at every number of trials at once
// with chance at least 1 - a. [0, 1] before any trial.
func RateCS(w, l int, a float64) Interval {
	if w < 0 || l < 0 || !(a > 0 && a < 1) {
		return Interval{math.NaN(), math.NaN()}
	}
	n := w + l
	if n == 0 {
		return Interval{0, 1}
	}
	limit := -math.Log(a)
	in := func(q float64) bool { return betaMixLogE(w, l, q) < limit }
	hat := float64(w) / float64(n)
	// ln E is convex in q with its minimum at the observed rate: bisect each side.
	edge := func(out, inside float64) float64 {
		if in(out) {
			return out
		}
		for range 60 {
			mid := (out + inside) / 2
			if in(mid) {
				inside = mid
			} else {
				out = mid
			}
		}
		return inside
	}
	return Interval{Lo: edge(0, hat), Hi: edge(1, hat)}
}

// MedianShiftCS is a confidence sequence, at confidence 1 - a, for the median
// of the paired differences d (mutated minus baseline): the shifts t that a
// two-sided sign e-process (uniform mixture) against "t is the median" has not
// reached 1/a at. Its bounds are values of d; a side the data cannot bound yet
// is infinite. Empty d gives NaN bounds (nothing computed).
func MedianShiftCS(d []float64, a float64) Interval {
	if len(d) == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	limit := -math.Log(a)
	in := func(t float64) bool {
		w, l := 0, 0
		for _, x := range s {
			switch {
			case x > t:
				w++
			case x < t:
				l++
			}
		}
		return betaMixLogE(w, l, 0.5) < limit
	}
	// The e-value is constant between the sorted differences: try below all,
	// each value, each gap between two values, and above all. A gap that is in
	// the set reaches down (up) to the value that bounds it.
	type cand struct {
		t   float64
		gap bool
	}
	cands := []cand{{t: math.Inf(-1)}}
	for i, x := range s {
		if i > 0 && x != s[i-1] {
			cands = append(cands, cand{t: (s[i-1] + x) / 2, gap: true})
		}
		if i == 0 || x != s[i-1] {
			cands = append(cands, cand{t: x})
		}
	}
	cands = append(cands, cand{t: math.Inf(1)})
	first, last := -1, -1
	for i, c := range cands {
		if in(c.t) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	lo, hi := cands[first].t, cands[last].t
	if cands[first].gap {
		lo = cands[first-1].t
	}
	if cands[last].gap {
		hi = cands[last+1].t
	}
	return Interval{Lo: lo, Hi: hi}
}

// Pair is the outcome of one baseline replica against its mutated partner.
type Pair int

// Outcomes of a pair.
const (
	Tie Pair = iota
	// MutatedWins: the mutated replica is better.
	MutatedWins
	// BaselineWins: the baseline replica is better.
	BaselineWins
)

// ComparePair compares one pair on the composite endpoint: a replica that
// failed is worse than any that passed; two passing replicas are compared by
// their metric (lower is better) rounded to resolution, so values equal at the
// recorded resolution tie; two failures tie, and so does a passing pair with an
// unmeasured metric. scale divides the mutated metric first (1 + margin for a
// test of a worse arm beyond a margin; 1 otherwise).
func ComparePair(basePass, mutPass bool, base, mut, resolution, scale float64) Pair {
	switch {
	case basePass && !mutPass:
		return BaselineWins
	case mutPass && !basePass:
		return MutatedWins
	case !basePass:
		return Tie
	}
	b, m := RoundTo(base, resolution), RoundTo(mut/scale, resolution)
	switch {
	case math.IsNaN(b) || math.IsNaN(m) || b == m:
		return Tie
	case m < b:
		return MutatedWins
	}
	return BaselineWins
}

// RoundTo rounds x to the nearest multiple of resolution (resolution <= 0:
// x unchanged). Metrics are compared at the resolution they are recorded at:
// 18.999999999999996 s and 19 s are one value at 0.1 s.
func RoundTo(x, resolution float64) float64 {
	if !(resolution > 0) || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r := math.Round(x/resolution) * resolution
	// Print-exact: the decimal nearest the multiple (0.30000000000000004 -> 0.3).
	digits := max(0, int(math.Ceil(-math.Log10(resolution)))+1)
	p := math.Pow(10, float64(digits))
	return math.Round(r*p) / p
}

// rounded is xs, each rounded to resolution (RoundTo).
func rounded(xs []float64, resolution float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = RoundTo(x, resolution)
	}
	return out
}
