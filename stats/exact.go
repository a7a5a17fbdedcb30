package stats

import (
	"math"
	"slices"
	"sync"
)

// Tails are the two one-sided p-values of a test of the mutated arm against the
// baseline: Greater is the chance, with no difference between the arms, of a
// statistic at least as large as the one observed (the mutated arm passes more
// often, or its metric is higher); Less of one at least as small.
type Tails struct {
	Greater float64 `json:"p_greater"`
	Less    float64 `json:"p_less"`
}

// hypergeometric returns P(X = x) for x from lo to hi, X the number of passes of
// the first row of a 2x2 table with row total r1, column total c1 and n in all.
func hypergeometric(r1, c1, n int) (lo int, pmf []float64) {
	lo, hi := max(0, c1-(n-r1)), min(r1, c1)
	for x := lo; x <= hi; x++ {
		pmf = append(pmf, math.Exp(lchoose(r1, x)+lchoose(n-r1, c1-x)-lchoose(n, c1)))
	}
	return lo, pmf
}

// FisherTails returns the one-sided p-values of Fisher's exact test on the 2x2
// table [[a, b], [c, d]] (rows: mutated, baseline; columns: passed, failed):
// Greater is P(X >= a), Less is P(X <= a), X hypergeometric with the table's
// margins (R's fisher.test(alternative = "greater") and "less").
func FisherTails(a, b, c, d int) Tails {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return Tails{math.NaN(), math.NaN()}
	}
	lo, pmf := hypergeometric(a+b, a+c, a+b+c+d)
	return tailsOf(pmf, a-lo)
}

// tailsOf sums a probability mass function over the indices at or above and at
// or below at.
func tailsOf(pmf []float64, at int) Tails {
	var t Tails
	for i, p := range pmf {
		if i >= at {
			t.Greater += p
		}
		if i <= at {
			t.Less += p
		}
	}
	return Tails{Greater: math.Min(1, t.Greater), Less: math.Min(1, t.Less)}
}

// StratifiedPassTails is the exact conditional test of a common pass-rate
// difference over strata (the exact Cochran-Mantel-Haenszel test): each stratum
// a 2x2 table of the mutated and baseline arms' passes, its margins held fixed,
// the statistic the total of the mutated passes, whose distribution under no
// difference is the convolution of the strata's hypergeometric distributions.
// Strata are [4]int{mutated passed, mutated failed, baseline passed, baseline
// failed}.
func StratifiedPassTails(strata [][4]int) Tails {
	dist, lo, obs := []float64{1}, 0, 0
	for _, s := range strata {
		if s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 {
			return Tails{math.NaN(), math.NaN()}
		}
		l, pmf := hypergeometric(s[0]+s[1], s[0]+s[2], s[0]+s[1]+s[2]+s[3])
		next := make([]float64, len(dist)+len(pmf)-1)
		for i, p := range dist {
			for j, q := range pmf {
				next[i+j] += p * q
			}
		}
		dist, lo, obs = next, lo+l, obs+s[0]
	}
	return tailsOf(dist, obs-lo)
}

// exactRankLimit is the largest total sample size whose rank-sum distribution
// is computed exactly; larger samples use the normal approximation.
const exactRankLimit = 60

// RankTails is the one-sided Wilcoxon-Mann-Whitney rank-sum test of a (the
// mutated arm) against b (the baseline): ranks with ties averaged, the p-values
// from the exact permutation distribution of a's rank sum given the observed
// ranks (ties included) up to exactRankLimit values in all, the normal
// approximation with the tie-corrected variance and a continuity correction
// beyond. Greater is the chance of a rank sum at least as large (a higher) with
// no difference, Less of one at least as small. NaN for an empty sample.
func RankTails(a, b []float64) Tails {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return Tails{math.NaN(), math.NaN()}
	}
	ranks2, tied := doubledRanks(a, b)
	obs := 0
	for _, r := range ranks2[:m] {
		obs += r
	}
	if m+n > exactRankLimit {
		return normalRankTails(ranks2, m, obs)
	}
	dist, minSum := rankSumDist(ranks2, m, tied)
	return tailsOf(dist, obs-minSum)
}

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

// normalRankTails is the normal approximation of the rank-sum tails, with the
// tie-corrected variance and a continuity correction.
func normalRankTails(ranks2 []int, m, obs int) Tails {
	n := len(ranks2)
	var sum, sq float64
	for _, r := range ranks2 {
		x := float64(r) / 2
		sum += x
		sq += x * x
	}
	mean := float64(m) * sum / float64(n)
	// The variance of a sample sum drawn without replacement.
	pop := sq/float64(n) - (sum/float64(n))*(sum/float64(n))
	variance := float64(m) * pop * float64(n-m) / float64(n-1)
	w := float64(obs) / 2
	if variance <= 0 {
		return Tails{1, 1}
	}
	sd := math.Sqrt(variance)
	return Tails{Greater: 1 - normalCDF((w-mean-0.5)/sd), Less: normalCDF((w - mean + 0.5) / sd)}
}
