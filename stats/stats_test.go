package stats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The reference values below were computed outside this package: with R
// (prop.test(correct = FALSE), fisher.test, wilcox.test(exact = FALSE)) where the
// comment says so, otherwise with Python 3's standard library (statistics.NormalDist,
// statistics.quantiles(method="inclusive"), math.comb) from the textbook formulas.

func TestWilsonMatchesReference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{8, 10, 0.4901625, 0.9433178}, // R: prop.test(8, 10, correct = FALSE)$conf.int
		{0, 10, 0, 0.2775328},         // z^2 / (n + z^2) by hand
		{10, 10, 0.7224672, 1},
		{3, 7, 0.1582199, 0.7495416},
	}
	for _, c := range cases {
		got := Wilson(c.k, c.n, 0.95)
		assert.InDelta(t, c.lo, got.Lo, 1e-6, "%d/%d", c.k, c.n)
		assert.InDelta(t, c.hi, got.Hi, 1e-6, "%d/%d", c.k, c.n)
	}
	assert.Equal(t, Interval{0, 1}, Wilson(0, 0, 0.95))
}

func TestFisherExactMatchesReference(t *testing.T) {
	t.Parallel()
	// Tea tasting (R's fisher.test example): probabilities 1,16,36,16,1 over 70;
	// the tables no likelier than 16/70 sum to 34/70.
	assert.InDelta(t, 34.0/70, FisherExact(3, 1, 1, 3), 1e-12)
	// All against none: 2 / choose(20, 10).
	assert.InDelta(t, 2.0/184756, FisherExact(10, 0, 0, 10), 1e-15)
	assert.InDelta(t, 0.06977851869, FisherExact(7, 3, 2, 8), 1e-9)
	assert.InDelta(t, 0.002759456185, FisherExact(1, 9, 11, 3), 1e-11)
	assert.InDelta(t, 1.0, FisherExact(5, 5, 5, 5), 1e-12)
	assert.InDelta(t, FisherExact(7, 3, 2, 8), FisherExact(2, 8, 7, 3), 1e-12, "symmetric in the rows")
}

func TestQuantilesAreType7(t *testing.T) {
	t.Parallel()
	s := Summarize([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1})
	assert.Equal(t, Summary{N: 10, Median: 5.5, Q1: 3.25, Q3: 7.75}, s)
	assert.InDelta(t, 4.5, s.IQR(), 1e-12)
	assert.Equal(t, Summary{N: 5, Median: 3, Q1: 1, Q3: 4}, Summarize([]float64{3, 1, 4, 1, 5}))
	assert.Equal(t, 7.0, Quantile([]float64{7}, 0.25))
	assert.True(t, Summarize(nil).Median != Summarize(nil).Median, "NaN for no data")
}

func TestMannWhitneyMatchesReference(t *testing.T) {
	t.Parallel()
	// R: wilcox.test(1:5, 6:10, exact = FALSE) gives W = 0, p-value = 0.01219.
	got := MannWhitneyU([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	assert.Equal(t, 0.0, got.U)
	assert.InDelta(t, 0.0121857804, got.P, 1e-9)
	// With ties, by hand: ranks 1 | 3 3 3 | 5.5 5.5 | 7 | 8, R1 = 12.5, U = 2.5,
	// var = 16/12 * (9 - 30/56), z = (2.5 - 8 + 0.5)/sqrt(var).
	got = MannWhitneyU([]float64{1, 2, 2, 3}, []float64{2, 3, 4, 5})
	assert.Equal(t, 2.5, got.U)
	assert.InDelta(t, 0.1366582477, got.P, 1e-9)
	rev := MannWhitneyU([]float64{2, 3, 4, 5}, []float64{1, 2, 2, 3})
	assert.Equal(t, 13.5, rev.U)
	assert.InDelta(t, got.P, rev.P, 1e-12)
	assert.Equal(t, 1.0, MannWhitneyU([]float64{4, 4}, []float64{4, 4, 4}).P)
}

func TestBootstrapIsSeededAndCoversTheShift(t *testing.T) {
	t.Parallel()
	a := []float64{10, 11, 12, 13, 14, 15, 16}
	b := []float64{5, 6, 7, 8, 9, 10, 11}
	one := BootstrapMedianDiff(a, b, 1000, 0.95, 7)
	assert.Equal(t, one, BootstrapMedianDiff(a, b, 1000, 0.95, 7), "same seed, same interval")
	assert.True(t, one.Contains(-5), "the true shift -5 lies in %v", one)
	assert.Less(t, one.Hi, 0.0)
	same := BootstrapMedianDiff([]float64{3, 3, 3}, []float64{3, 3}, 200, 0.95, 1)
	assert.Equal(t, Interval{0, 0}, same)
}
