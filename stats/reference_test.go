package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// The reference computations the e-values and the calibration are checked
// against (anytime_test.go, calibration_test.go): van Elteren's stratified
// rank-sum test with its exact or Monte Carlo null distribution, and the Wilson
// score interval. The binary never runs them; they live with the tests that
// use them as oracles.

// Tails are the two one-sided p-values of a test of the mutated arm against the
// baseline: Greater is the chance, with no difference between the arms, of a
// statistic at least as large as the one observed (the mutated arm passes more
// often, or its metric is higher); Less of one at least as small.
type Tails struct {
	Greater float64 `json:"p_greater"`
	Less    float64 `json:"p_less"`
}

// exactRankLimit is the largest total sample size whose rank-sum distribution
// is computed exactly; larger samples use the normal approximation.
const exactRankLimit = 60

// doubledRanks returns twice the mid-ranks of a followed by b (integers), and
// whether any values tie.
func doubledRanks(a, b []float64) ([]int, bool) {
	all := append(slices.Clone(a), b...)
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmpFloat(all[x], all[y]) })
	ranks := make([]int, len(all))
	tied := false
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && all[idx[j]] == all[idx[i]] {
			j++
		}
		if j-i > 1 {
			tied = true
		}
		for k := i; k < j; k++ {
			ranks[idx[k]] = i + j + 1 // twice the mean of ranks i+1..j
		}
		i = j
	}
	return ranks, tied
}

type rankKey struct{ m, n int }

// untiedDists caches the rank-sum distributions of untied samples, which depend
// only on the sample sizes.
var untiedDists sync.Map

// rankSumDist is the distribution of the sum of m of ranks2 drawn at random
// without replacement, indexed from its smallest possible sum, which it returns.
func rankSumDist(ranks2 []int, m int, tied bool) ([]float64, int) {
	key := rankKey{m, len(ranks2)}
	if !tied {
		if d, ok := untiedDists.Load(key); ok {
			e := d.([]float64)
			return e, m * (m + 1)
		}
	}
	sorted := slices.Clone(ranks2)
	slices.Sort(sorted)
	minSum, maxSum := 0, 0
	for i := range m {
		minSum += sorted[i]
		maxSum += sorted[len(sorted)-1-i]
	}
	width := maxSum + 1
	// ways[j][s]: the number of j-subsets of the ranks seen so far summing to s.
	ways := make([][]float64, m+1)
	for j := range ways {
		ways[j] = make([]float64, width)
	}
	ways[0][0] = 1
	for i, r := range sorted {
		for j := min(i+1, m); j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := width - 1; s >= r; s-- {
				if prev[s-r] != 0 {
					cur[s] += prev[s-r]
				}
			}
		}
	}
	total := math.Exp(lchoose(len(ranks2), m))
	dist := make([]float64, maxSum-minSum+1)
	for s := minSum; s <= maxSum; s++ {
		dist[s-minSum] = ways[m][s] / total
	}
	if !tied {
		untiedDists.Store(key, dist)
	}
	return dist, minSum
}

// StratifiedResamples is how many within-stratum permutations the stratified
// rank test draws when its exact distribution is too large to enumerate.
const StratifiedResamples = 19999

// maxExactSupport bounds the number of distinct values of the van Elteren
// statistic the exact distribution may hold before Monte Carlo takes over.
const maxExactSupport = 1 << 20

// VanElteren is van Elteren's stratified rank-sum test of the mutated arms'
// values against the baselines', one stratum per pipeline.
type VanElteren struct {
	Tails Tails `json:"tails"`
	// Exact is true when the p-values come from the whole permutation
	// distribution (enumerated); false when from Resamples seeded permutations,
	// whose Monte Carlo error is at most MCError (99% confidence, each tail).
	Exact     bool    `json:"exact"`
	Resamples int     `json:"resamples,omitempty"`
	MCError   float64 `json:"mc_error,omitempty"`
}

// VanElterenTails is van Elteren's test: the statistic is the sum over the
// strata of the mutated arm's rank sum within its stratum divided by the
// stratum's size plus one. Values are rounded to resolution first, so values
// equal at the recorded resolution tie (mid-ranks). The null distribution is
// exact (each stratum's rank-sum distribution given its ties, convolved) when
// every stratum has at most 60 values and the statistic at most 2^20 distinct
// values; else it is drawn from resamples seeded permutations, p = (1 + as
// extreme) / (1 + resamples), with its Monte Carlo error stated. Strata with an
// empty arm carry no information and are left out; NaN tails when none is left.
func VanElterenTails(base, mut [][]float64, resolution float64, resamples int, seed uint64) VanElteren {
	type stratum struct {
		ranks2 []int
		m      int
		tied   bool
	}
	var strata []stratum
	for k := range base {
		if k >= len(mut) || len(base[k]) == 0 || len(mut[k]) == 0 {
			continue
		}
		r2, tied := doubledRanks(rounded(mut[k], resolution), rounded(base[k], resolution))
		strata = append(strata, stratum{ranks2: r2, m: len(mut[k]), tied: tied})
	}
	if len(strata) == 0 {
		return VanElteren{Tails: Tails{math.NaN(), math.NaN()}}
	}
	// Scale every stratum's weight 1/(N+1) to an integer: L/(N+1), L the lcm.
	L := int64(1)
	exact := true
	for _, st := range strata {
		L = lcm(L, int64(len(st.ranks2)+1))
		if L > 1<<40 || len(st.ranks2) > exactRankLimit {
			exact = false
		}
	}
	obs := int64(0)
	for _, st := range strata {
		s := 0
		for _, r := range st.ranks2[:st.m] {
			s += r
		}
		obs += int64(s) * (L / int64(len(st.ranks2)+1))
	}
	if exact {
		dist := map[int64]float64{0: 1}
		for _, st := range strata {
			pmf, lo := rankSumDist(st.ranks2, st.m, st.tied)
			w := L / int64(len(st.ranks2)+1)
			next := make(map[int64]float64, len(dist)*len(pmf))
			for v, p := range dist {
				for i, q := range pmf {
					if q != 0 {
						next[v+int64(lo+i)*w] += p * q
					}
				}
			}
			dist = next
			if len(dist) > maxExactSupport {
				exact = false
				break
			}
		}
		if exact {
			var greater, less float64
			for v, p := range dist {
				if v >= obs {
					greater += p
				}
				if v <= obs {
					less += p
				}
			}
			return VanElteren{Tails: Tails{Greater: math.Min(1, greater), Less: math.Min(1, less)}, Exact: true}
		}
	}
	if resamples < 1 {
		resamples = StratifiedResamples
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	greater, less := 0, 0
	for range resamples {
		t := int64(0)
		for _, st := range strata {
			w := L / int64(len(st.ranks2)+1)
			perm := rng.Perm(len(st.ranks2))
			s := 0
			for _, i := range perm[:st.m] {
				s += st.ranks2[i]
			}
			t += int64(s) * w
		}
		if t >= obs {
			greater++
		}
		if t <= obs {
			less++
		}
	}
	f := float64(resamples + 1)
	tails := Tails{Greater: float64(greater+1) / f, Less: float64(less+1) / f}
	// 99% normal bound on the Monte Carlo error of either tail.
	v := 1 / float64(resamples)
	for _, p := range []float64{tails.Greater, tails.Less} {
		v = math.Max(v, p*(1-p))
	}
	mcErr := 2.576 * math.Sqrt(v/float64(resamples))
	return VanElteren{Tails: tails, Resamples: resamples, MCError: mcErr}
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	if a/x > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a / x * b
}

// normalQuantile is the standard normal quantile function (the inverse of
// normalCDF): p 0.975 gives 1.959964. NaN outside (0, 1).
func normalQuantile(p float64) float64 {
	if p <= 0 || p >= 1 {
		return math.NaN()
	}
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// zFor returns the two-sided standard normal critical value for the confidence
// level conf (0.95 gives 1.959964).
func zFor(conf float64) float64 {
	return normalQuantile(1 - (1-conf)/2)
}

// Wilson returns the Wilson score interval of a proportion of successes out of n
// trials at confidence level conf (without continuity correction, as R's
// prop.test(correct = FALSE)); [0, 1] when n is 0.
func Wilson(successes, n int, conf float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	z := zFor(conf)
	z2 := z * z
	nf := float64(n)
	p := float64(successes) / nf
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{Lo: math.Max(0, center-half), Hi: math.Min(1, center+half)}
}
