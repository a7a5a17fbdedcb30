package stats

import (
	"fmt"
	"math"
)

// Alpha-spending functions of a sequential (--until-decided) design.
const (
	// SpendOBrienFleming is the Lan-DeMets O'Brien-Fleming-type spending
	// function, 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)): almost nothing spent early,
	// nearly all of alpha kept for the last look.
	SpendOBrienFleming = "obrien-fleming"
	// SpendPocock is the Lan-DeMets Pocock-type function alpha ln(1 + (e-1) t):
	// alpha spread evenly over the looks.
	SpendPocock = "pocock"
)

// SpendingNames lists the spending functions, the default first.
func SpendingNames() []string { return []string{SpendOBrienFleming, SpendPocock} }

// spent is the share of alpha spent by information fraction t (0..1).
func spent(fn string, alpha, t float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	case fn == SpendPocock:
		return alpha * math.Log(1+(math.E-1)*t)
	}
	return 2 - 2*normalCDF(normalQuantile(1-alpha/2)/math.Sqrt(t))
}

// PlannedLooks is the schedule of a sequential design: the replicas per arm at
// which the rule looks, from first, doubling, to max (the last look is always
// max). One look, at first, when max is not above it.
func PlannedLooks(first, max int) []int {
	if first < 1 {
		first = 1
	}
	looks := []int{first}
	for n := first * 2; n < max; n *= 2 {
		looks = append(looks, n)
	}
	if max > first {
		looks = append(looks, max)
	}
	return looks
}

// Look is where a decision stands in its design.
type Look struct {
	// K is the look (1-based) of Of planned, at N replicas per arm.
	K  int `json:"k"`
	Of int `json:"of"`
	N  int `json:"n"`
	// Level is the share of alpha this look may spend on a decision: all of it
	// in a fixed design; in a sequential one, the spending function's increment
	// since the last look that could decide.
	Level float64 `json:"level"`
	// Final is set at the last planned look: an undecided case is a skip.
	Final bool `json:"final"`
}

// lookLevels returns the level of each planned look: the spending function's
// increments, where a look that no data could decide at (its level below the
// smallest p-value the exact tests can reach with that many replicas) passes
// its increment on to the next. The levels sum to at most alpha, so by the
// union bound the chance of any false decision over all looks is at most alpha
// whatever the dependence between them.
func lookLevels(fn string, alpha float64, looks []int, endpoints int) []float64 {
	levels := make([]float64, len(looks))
	last := looks[len(looks)-1]
	carried, before := 0.0, 0.0
	for k, n := range looks {
		now := spent(fn, alpha, float64(n)/float64(last))
		inc := now - before + carried
		before = now
		if k < len(looks)-1 && endpointLevel(inc, endpoints)/2 < minExactP(n) {
			carried = inc
			continue
		}
		levels[k], carried = inc, 0
	}
	return levels
}

// minExactP is the smallest one-sided p-value Fisher's or the rank-sum test
// can give with n replicas per arm: 1 / choose(2n, n).
func minExactP(n int) float64 { return math.Exp(-lchoose(2*n, n)) }

// endpointLevel is the two-sided level of each of endpoints tests (Sidak) whose
// union has level alpha: 1 - (1 - alpha)^(1/endpoints).
func endpointLevel(alpha float64, endpoints int) float64 {
	if endpoints <= 1 {
		return alpha
	}
	return -math.Expm1(math.Log1p(-alpha) / float64(endpoints))
}

// lookAt places n replicas per arm in r's design.
func (r Rule) lookAt(n int) Look {
	if len(r.Looks) == 0 {
		return Look{K: 1, Of: 1, N: n, Level: r.Alpha, Final: n >= r.MaxReplicas}
	}
	levels := lookLevels(r.Spending, r.Alpha, r.Looks, 2)
	for k := len(r.Looks) - 1; k >= 0; k-- {
		if n >= r.Looks[k] {
			return Look{K: k + 1, Of: len(r.Looks), N: n, Level: levels[k], Final: k == len(r.Looks)-1}
		}
	}
	return Look{K: 0, Of: len(r.Looks), N: n}
}

// designText says how the rule's alpha is spent, in words.
func (r Rule) designText() string {
	if len(r.Looks) <= 1 {
		return fmt.Sprintf("Fixed design: one look at alpha = %g.", r.Alpha)
	}
	levels := lookLevels(r.Spending, r.Alpha, r.Looks, 2)
	s := fmt.Sprintf("Sequential design (--until-decided): planned looks at %v replicas per arm; alpha = %g spent by the Lan-DeMets %s function, each look testing at its increment (", r.Looks, r.Alpha, r.Spending)
	for k, l := range levels {
		if k > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.4g", l)
	}
	return s + "; a look no data could decide at passes its share on), so by the union bound the chance of a false ADOPT or REJECT over all looks is at most alpha."
}
