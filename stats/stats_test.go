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
	assert.Equal(t, Summary{N: 1, Median: 7, Q1: 7, Q3: 7}, Summarize([]float64{7}))
	assert.True(t, Summarize(nil).Median != Summarize(nil).Median, "NaN for no data")
}
