package stats

import (
	"math"
	"math/rand/v2"
)

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

func rounded(xs []float64, resolution float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = RoundTo(x, resolution)
	}
	return out
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
