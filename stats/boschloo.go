package stats

import (
	"math"
	"slices"
	"sync"
)

// boschlooGrid is how many nuisance pass rates the supremum is first searched
// over, before it is refined around the best of them.
const boschlooGrid = 99

// boschlooKey names the cached reference set of one pair of arm sizes.
type boschlooKey struct{ n1, n2 int }

// boschlooSet is every table of two arms of sizes n1 and n2 ordered by Fisher's
// one-sided (greater) p-value, and, at each grid rate, the cumulative chance of
// the tables up to each place in that order.
type boschlooSet struct {
	n1, n2 int
	// order lists the tables (x1, x2) as x1*(n2+1)+x2, by Fisher's p, ascending;
	// stat[i] is the p-value of order[i]; rank maps a table to its place.
	order []int
	stat  []float64
	rank  []int
	grid  []float64
	cum   [][]float64
	// memo holds the p-values computed so far, by table (NaN: not yet).
	mu   sync.Mutex
	memo []float64
}

var boschlooSets sync.Map

func boschlooFor(n1, n2 int) *boschlooSet {
	key := boschlooKey{n1, n2}
	if s, ok := boschlooSets.Load(key); ok {
		return s.(*boschlooSet)
	}
	s := &boschlooSet{n1: n1, n2: n2}
	size := (n1 + 1) * (n2 + 1)
	stats := make([]float64, size)
	for x1 := 0; x1 <= n1; x1++ {
		for x2 := 0; x2 <= n2; x2++ {
			stats[x1*(n2+1)+x2] = FisherTails(x1, n1-x1, x2, n2-x2).Greater
		}
	}
	s.order = make([]int, size)
	for i := range s.order {
		s.order[i] = i
	}
	slices.SortStableFunc(s.order, func(a, b int) int { return cmpFloat(stats[a], stats[b]) })
	s.stat, s.rank, s.memo = make([]float64, size), make([]int, size), make([]float64, size)
	for i := range s.memo {
		s.memo[i] = math.NaN()
	}
	for i, t := range s.order {
		s.stat[i], s.rank[t] = stats[t], i
	}
	for j := 1; j <= boschlooGrid; j++ {
		pi := float64(j) / (boschlooGrid + 1)
		probs := s.probs(pi)
		cum := make([]float64, size)
		acc := 0.0
		for i, t := range s.order {
			acc += probs[t]
			cum[i] = acc
		}
		s.grid, s.cum = append(s.grid, pi), append(s.cum, cum)
	}
	actual, _ := boschlooSets.LoadOrStore(key, s)
	return actual.(*boschlooSet)
}

// probs is the chance of each table when both arms pass at rate pi.
func (s *boschlooSet) probs(pi float64) []float64 {
	b1, b2 := binomialPMF(s.n1, pi), binomialPMF(s.n2, pi)
	out := make([]float64, (s.n1+1)*(s.n2+1))
	for x1, p := range b1 {
		for x2, q := range b2 {
			out[x1*(s.n2+1)+x2] = p * q
		}
	}
	return out
}

func binomialPMF(n int, p float64) []float64 {
	out := make([]float64, n+1)
	for k := range out {
		out[k] = math.Exp(lchoose(n, k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return out
}

// greater is Boschloo's one-sided p-value of the table x1 of n1, x2 of n2: the
// supremum over the common pass rate of the chance of a table whose Fisher
// p-value is no larger than the observed one's.
func (s *boschlooSet) greater(x1, x2 int) float64 {
	t := x1*(s.n2+1) + x2
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.memo[t]; !math.IsNaN(p) {
		return p
	}
	p := s.supremum(t)
	s.memo[t] = p
	return p
}

// supremum computes greater's p-value of table t.
func (s *boschlooSet) supremum(t int) float64 {
	at := s.rank[t]
	// Every table tied with the observed one counts (a relative tolerance as R's).
	for at+1 < len(s.stat) && s.stat[at+1] <= s.stat[at]*(1+1e-7) {
		at++
	}
	if at == len(s.stat)-1 {
		return 1
	}
	best, bestJ := 0.0, 0
	for j, cum := range s.cum {
		if cum[at] > best {
			best, bestJ = cum[at], j
		}
	}
	// Refine around the best grid rate by golden-section search.
	region := s.order[:at+1]
	size := func(pi float64) float64 {
		probs := s.probs(pi)
		sum := 0.0
		for _, t := range region {
			sum += probs[t]
		}
		return sum
	}
	lo, hi := s.grid[max(bestJ-1, 0)], s.grid[min(bestJ+1, len(s.grid)-1)]
	if bestJ == 0 {
		lo = 1e-9
	}
	if bestJ == len(s.grid)-1 {
		hi = 1 - 1e-9
	}
	const g = 0.6180339887498949
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := size(a), size(b)
	for range 30 {
		if fa > fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = size(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = size(b)
		}
	}
	return math.Min(1, math.Max(best, math.Max(fa, fb)))
}

// boschlooLimit is the largest arm size Boschloo's test is computed for;
// larger arms take Fisher's test, also exact, whose conservatism fades as the
// arms grow.
const boschlooLimit = 30

// BoschlooTails is Boschloo's exact unconditional test of the mutated arm's
// passes (a of a+b) against the baseline's (c of c+d), one-sided each way: the
// statistic is Fisher's one-sided p-value, its p-value the largest chance of a
// statistic as extreme over every common pass rate. It is exact (never above
// its level with no difference) and uniformly more powerful than Fisher's test.
// Arms larger than boschlooLimit take Fisher's test.
func BoschlooTails(a, b, c, d int) Tails {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return Tails{math.NaN(), math.NaN()}
	}
	n1, n2 := a+b, c+d
	if n1 == 0 || n2 == 0 {
		return Tails{1, 1}
	}
	if max(n1, n2) > boschlooLimit {
		return FisherTails(a, b, c, d)
	}
	s := boschlooFor(n1, n2)
	return Tails{Greater: s.greater(a, c), Less: s.greater(b, d)}
}
