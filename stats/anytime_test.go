package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SignE is a martingale under the null: its expectation over Binomial(n, 1/2)
// wins is exactly 1 at every n (so Ville's inequality applies), and it has the
// closed form's values.
func TestSignEIsANullMartingale(t *testing.T) {
	t.Parallel()
	assert.InDelta(t, 1, SignE(0, 0), 1e-12)
	assert.InDelta(t, 1024.0/10*(1-1.0/1024), SignE(9, 0), 1e-9, "all nine won: 2^10/10 P(Bin(10,1/2) <= 9)")
	for n := 1; n <= 60; n++ {
		mean := 0.0
		for w := 0; w <= n; w++ {
			mean += math.Exp(lchoose(n, w)-float64(n)*math.Ln2) * SignE(w, n-w)
		}
		assert.InDelta(t, 1, mean, 1e-9, "n = %d", n)
	}
	// Numerical check of the closed form against the integral it stands for.
	for _, c := range [][2]int{{3, 1}, {7, 2}, {0, 5}, {12, 12}} {
		w, l := c[0], c[1]
		integral, steps := 0.0, 200000
		for i := range steps {
			p := 0.5 + (float64(i)+0.5)/float64(steps)*0.5
			integral += 2 * math.Pow(2*p, float64(w)) * math.Pow(2*(1-p), float64(l)) * 0.5 / float64(steps)
		}
		assert.InDelta(t, integral, SignE(w, l), 1e-6*math.Max(1, integral), "%d wins, %d losses", w, l)
	}
	assert.Greater(t, SignE(10, 1), SignE(9, 1))
	assert.Less(t, SignE(9, 2), SignE(9, 1))
}

// RateCS holds every rate whose mixture e-value is below 1/a, and no other
// (checked on a grid), and always the observed rate.
func TestRateCSIsTheSetBelowTheThreshold(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]int{{0, 0}, {0, 10}, {10, 0}, {3, 7}, {40, 2}} {
		w, l := c[0], c[1]
		cs := RateCS(w, l, 0.05)
		for q := 0.0005; q < 1; q += 0.001 {
			in := betaMixLogE(w, l, q) < -math.Log(0.05)
			assert.Equal(t, in, cs.Contains(q), "%d/%d at q = %g: %v", w, w+l, q, cs)
		}
		if w+l > 0 {
			assert.True(t, cs.Contains(float64(w)/float64(w+l)))
		}
	}
}

// MedianShiftCS is the hull of the shifts the two-sided sign e-process has not
// rejected; with few pairs a side stays unbounded.
func TestMedianShiftCS(t *testing.T) {
	t.Parallel()
	d := []float64{-1.2, -0.8, -0.8, -0.5, -0.3, -0.9, -1.1, -0.2, -0.7, -0.6, -1.0, -0.4, 0.1, -0.5, -0.9, -0.8}
	cs := MedianShiftCS(d, 0.05)
	s := slices.Clone(d)
	slices.Sort(s)
	for t0 := -2.0; t0 <= 1; t0 += 0.01 {
		w, l := 0, 0
		for _, x := range s {
			if x > t0 {
				w++
			} else if x < t0 {
				l++
			}
		}
		if betaMixLogE(w, l, 0.5) < -math.Log(0.05) {
			assert.True(t, cs.Contains(t0), "shift %g is not rejected, so it is in %v", t0, cs)
		}
	}
	assert.Less(t, cs.Hi, 0.0, "sixteen pairs, fifteen lower: the median shift is below 0")
	few := MedianShiftCS([]float64{-1, -2}, 0.05)
	assert.True(t, math.IsInf(few.Lo, -1) && math.IsInf(few.Hi, 1), "two pairs bound nothing: %v", few)
	assert.True(t, math.IsNaN(MedianShiftCS(nil, 0.05).Lo), "no pair: nothing computed")
}

// Ties are ties: metrics equal at the recorded resolution tie in a pair.
func TestComparePairRoundsToResolution(t *testing.T) {
	t.Parallel()
	assert.Equal(t, Tie, ComparePair(true, true, 19, 18.999999999999996, 0.1, 1))
	assert.Equal(t, MutatedWins, ComparePair(true, true, 19, 18.9, 0.1, 1))
	assert.Equal(t, BaselineWins, ComparePair(true, false, 19, 1, 0.1, 1), "a failure is worse than any pass, however fast")
	assert.Equal(t, MutatedWins, ComparePair(false, true, 1, 99, 0.1, 1))
	assert.Equal(t, Tie, ComparePair(false, false, 1, 99, 0.1, 1))
	assert.Equal(t, 0.3, RoundTo(0.1+0.2, 0.1))
}

// van Elteren's exact distribution matches brute-force enumeration of every
// within-stratum relabelling, ties included; Monte Carlo lands within its
// stated error of it.
func TestVanElterenExactMatchesEnumeration(t *testing.T) {
	t.Parallel()
	base := [][]float64{{3.1, 2.0, 2.9}, {5, 5.0000000001, 7, 4}, {1.1}}
	mut := [][]float64{{1.9, 2.0, 2.2}, {5, 3}, {0.9, 1.0}}
	got := VanElterenTails(base, mut, 0.1, 0, 1)
	require.True(t, got.Exact)
	// Brute force: every choice of the mutated positions in every stratum.
	type st struct {
		vals []float64
		m    int
	}
	var strata []st
	for k := range base {
		strata = append(strata, st{append(rounded(mut[k], 0.1), rounded(base[k], 0.1)...), len(mut[k])})
	}
	stat := func(k int, pick []int) float64 {
		r2, _ := doubledRanks(strata[k].vals, nil)
		s := 0
		for _, i := range pick {
			s += r2[i]
		}
		return float64(s) / float64(len(strata[k].vals)+1)
	}
	obs := 0.0
	var choices [][][]int
	for k, s := range strata {
		first := make([]int, s.m)
		for i := range first {
			first[i] = i
		}
		obs += stat(k, first)
		choices = append(choices, subsets(len(s.vals), s.m))
	}
	var ge, le, total float64
	var walk func(k int, acc float64)
	walk = func(k int, acc float64) {
		if k == len(strata) {
			total++
			if acc >= obs-1e-9 {
				ge++
			}
			if acc <= obs+1e-9 {
				le++
			}
			return
		}
		for _, c := range choices[k] {
			walk(k+1, acc+stat(k, c))
		}
	}
	walk(0, 0)
	assert.InDelta(t, ge/total, got.Tails.Greater, 1e-12)
	assert.InDelta(t, le/total, got.Tails.Less, 1e-12)

	// Monte Carlo on the same data (forced by zero support) against the exact p.
	big := make([][]float64, 0)
	bigM := make([][]float64, 0)
	for k := range 3 {
		var b, m []float64
		for i := range 40 {
			b = append(b, float64((i*7+k*3)%23))
			m = append(m, float64((i*5+k)%19))
		}
		big, bigM = append(big, b), append(bigM, m)
	}
	mc := VanElterenTails(big, bigM, 1, 20000, 3)
	assert.False(t, mc.Exact, "80 values per stratum: Monte Carlo")
	assert.Greater(t, mc.MCError, 0.0)
	assert.Less(t, mc.MCError, 0.01)
}

func subsets(n, m int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == m {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}
