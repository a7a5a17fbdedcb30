package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// scenario is one arm's truth: its pass probability and the median and log
// spread of its metric on passing replicas (failed replicas take 0, which the
// rule must ignore).
type scenario struct {
	pass, median, sigma float64
}

func (s scenario) draw(rng *rand.Rand, n int) Arm {
	a := Arm{Passed: make([]bool, n), Metric: make([]float64, n)}
	for i := range n {
		a.Passed[i] = rng.Float64() < s.pass
		if a.Passed[i] {
			a.Metric[i] = s.median * math.Exp(s.sigma*rng.NormFloat64())
		}
	}
	return a
}

func prefix(a Arm, n int) Arm { return Arm{Passed: a.Passed[:n], Metric: a.Metric[:n]} }

// experiment runs one simulated A/B experiment of base against mut with n
// replicas per arm, sequentially up to max when max > n, and returns the
// verdict and the replicas used.
func experiment(rng *rand.Rand, r Rule, base, mut scenario, n, max int) (string, int) {
	if max <= n {
		d := r.decide(base.draw(rng, n), mut.draw(rng, n))
		return d.Verdict, n
	}
	r = r.Sequential(n, max)
	b, m := base.draw(rng, max), mut.draw(rng, max)
	for _, look := range r.Looks {
		d := r.decide(prefix(b, look), prefix(m, look))
		if d.Verdict != Expand {
			return d.Verdict, look
		}
	}
	return Skip, max
}

// rates runs trials experiments and returns the share of each verdict.
func rates(seed uint64, trials int, r Rule, base, mut scenario, n, max int) map[string]float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)<<32|uint64(max)))
	out := map[string]float64{}
	for range trials {
		v, _ := experiment(rng, r, base, mut, n, max)
		out[v] += 1 / float64(trials)
	}
	return out
}

var reference = scenario{pass: 0.83, median: 100, sigma: 0.25}

// The false-decision rate of identical arms (A/A) stays within alpha: the
// lower end of the 95% Wilson interval of the observed rate is not above alpha,
// at every replica count, fixed and sequential.
func TestCalibrationAAFalseDecisionRateWithinAlpha(t *testing.T) {
	t.Parallel()
	const trials = 1000
	r := DefaultRule()
	for _, n := range []int{3, 5, 10, 20} {
		for _, max := range []int{n, 4 * n} {
			got := rates(29, trials, r, reference, reference, n, max)
			wrong := got[Adopt] + got[Reject]
			ci := Wilson(int(math.Round(wrong*trials)), trials, 0.95)
			assert.LessOrEqual(t, ci.Lo, r.Alpha, "n=%d max=%d: false decisions %.3f (adopt %.3f, reject %.3f)", n, max, wrong, got[Adopt], got[Reject])
			t.Logf("A/A n=%d max=%d: adopt %.3f reject %.3f", n, max, got[Adopt], got[Reject])
		}
	}
}

// A template whose replicas pass 8% of the time against 83% is rejected at
// least 90% of the time with 10 replicas, and never adopted.
func TestCalibrationTrulyWorseIsRejected(t *testing.T) {
	t.Parallel()
	worse := scenario{pass: 0.08, median: 100, sigma: 0.25}
	got := rates(30, 1000, DefaultRule(), reference, worse, 10, 10)
	t.Logf("truly worse at 10: reject %.3f, sequential 3..10: reject %.3f", got[Reject], rates(31, 1000, DefaultRule(), reference, worse, 3, 10)[Reject])
	assert.GreaterOrEqual(t, got[Reject], 0.9)
	assert.Zero(t, got[Adopt])
	seq := rates(31, 1000, DefaultRule(), reference, worse, 3, 10)
	assert.GreaterOrEqual(t, seq[Reject], 0.9, "sequential 3..10")
	assert.Zero(t, seq[Adopt])
}

// A faster, equally reliable template is adopted more often than not at 10
// replicas, and a slower one is never adopted.
func TestCalibrationMetricDecides(t *testing.T) {
	t.Parallel()
	faster := scenario{pass: 0.83, median: 50, sigma: 0.25}
	got := rates(32, 400, DefaultRule(), reference, faster, 10, 10)
	assert.Greater(t, got[Adopt], 0.5)
	assert.Zero(t, got[Reject])
	slower := scenario{pass: 0.83, median: 200, sigma: 0.25}
	got = rates(33, 400, DefaultRule(), reference, slower, 10, 10)
	assert.Greater(t, got[Reject], 0.5)
	assert.Zero(t, got[Adopt])
}
