package stats

import (
	"fmt"
	"math"
	"strings"
)

// Verdicts of the decision rule.
const (
	Adopt  = "adopt"
	Reject = "reject"
	Skip   = "skip"
	Expand = "expand"
)

// Arm is one arm's replicas: whether each passed, and one value per replica of
// the metric the mutation is meant to lower (Metric may be empty: outcome only).
type Arm struct {
	Passed []bool
	Metric []float64
}

// Passes counts the replicas that passed.
func (a Arm) Passes() int {
	n := 0
	for _, p := range a.Passed {
		if p {
			n++
		}
	}
	return n
}

// Rule is the decision rule's parameters.
type Rule struct {
	// Confidence of the intervals (0.95); Alpha = 1 - Confidence for the tests.
	Confidence float64 `json:"confidence"`
	// MinReduction is the least relative lowering of the baseline's median metric
	// that counts as an effect (0.15).
	MinReduction float64 `json:"min_reduction"`
	// MinReplicas per arm below which the rule asks for more (3).
	MinReplicas int `json:"min_replicas"`
	// MaxReplicas per arm from which an undecided case is a skip, not an expand (10).
	MaxReplicas int `json:"max_replicas"`
	// Resamples and Seed of the bootstrap interval.
	Resamples int    `json:"resamples"`
	Seed      uint64 `json:"seed"`
}

// DefaultRule is the rule replay applies unless told otherwise.
func DefaultRule() Rule {
	return Rule{Confidence: 0.95, MinReduction: 0.15, MinReplicas: 3, MaxReplicas: 10, Resamples: 2000, Seed: 1}
}

// Text is the rule in words, with its parameters, as the reports print it.
func (r Rule) Text() string {
	alpha := 1 - r.Confidence
	steps := []string{
		"Correctness gate: if the mutated arm's pass rate is below the baseline's, reject.",
		fmt.Sprintf("Too few replicas: with fewer than %d per arm, expand.", r.MinReplicas),
		fmt.Sprintf("Pass rate: if the mutated arm passes more often, adopt when the %.0f%% Wilson intervals are apart and Fisher's exact test gives p < %.2g; otherwise expand (skip from %d replicas on).", r.Confidence*100, alpha, r.MaxReplicas),
		"Equal pass rates and no metric: skip.",
		fmt.Sprintf("Effect size: if the mutated median does not lower the baseline median by at least %.0f%%, skip.", r.MinReduction*100),
		"Majority: if at most half of the mutated replicas are below the baseline median, skip.",
		fmt.Sprintf("Band separation: if the majority is the bare minimum, or the interquartile bands touch (mutated Q3 >= baseline Q1), or the %.0f%% bootstrap interval of the difference of medians (%d resamples, seed %d) holds 0, or Mann-Whitney U gives p >= %.2g: expand (skip from %d replicas on).", r.Confidence*100, r.Resamples, r.Seed, alpha, r.MaxReplicas),
		"Otherwise adopt.",
	}
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String()
}

// Decision is the verdict on two arms with the statistics it rests on.
type Decision struct {
	Verdict string `json:"verdict"`
	// Step is the rule's step (1-based) that decided; Reason says why in words.
	Step   int    `json:"step"`
	Reason string `json:"reason"`

	BaselinePass RateStats    `json:"baseline_pass"`
	MutatedPass  RateStats    `json:"mutated_pass"`
	FisherP      float64      `json:"fisher_p"`
	Metric       *MetricStats `json:"metric,omitempty"`
}

// RateStats is a pass rate with its Wilson interval.
type RateStats struct {
	Passed int      `json:"passed"`
	N      int      `json:"n"`
	Rate   float64  `json:"rate"`
	Wilson Interval `json:"wilson"`
}

// MetricStats compares the arms' metric.
type MetricStats struct {
	Baseline Summary `json:"baseline"`
	Mutated  Summary `json:"mutated"`
	// Reduction is 1 - mutated median / baseline median (0 when the baseline's is 0).
	Reduction float64 `json:"reduction"`
	// Below counts the mutated replicas under the baseline median.
	Below int `json:"below"`
	// Bootstrap is the interval of median(mutated) - median(baseline).
	Bootstrap   Interval    `json:"bootstrap"`
	MannWhitney MannWhitney `json:"mann_whitney"`
}

func rateOf(a Arm, conf float64) RateStats {
	n, k := len(a.Passed), a.Passes()
	rs := RateStats{Passed: k, N: n, Wilson: Wilson(k, n, conf)}
	if n > 0 {
		rs.Rate = float64(k) / float64(n)
	}
	return rs
}

// Decide applies the rule to the baseline and mutated arms.
func (r Rule) Decide(base, mut Arm) Decision {
	d := Decision{BaselinePass: rateOf(base, r.Confidence), MutatedPass: rateOf(mut, r.Confidence)}
	d.FisherP = FisherExact(d.MutatedPass.Passed, d.MutatedPass.N-d.MutatedPass.Passed, d.BaselinePass.Passed, d.BaselinePass.N-d.BaselinePass.Passed)
	if len(base.Metric) > 0 && len(mut.Metric) > 0 {
		d.Metric = r.compareMetric(base.Metric, mut.Metric)
	}
	n := min(len(base.Passed), len(mut.Passed))
	alpha := 1 - r.Confidence
	undecided := func(step int, why string) Decision {
		if n >= r.MaxReplicas {
			return d.set(Skip, step, why+fmt.Sprintf("; %d replicas per arm reached", n))
		}
		return d.set(Expand, step, why+"; more replicas may decide")
	}
	switch {
	case d.MutatedPass.Rate < d.BaselinePass.Rate:
		return d.set(Reject, 1, fmt.Sprintf("the mutated arm passes %d/%d, the baseline %d/%d", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N))
	case n < r.MinReplicas:
		return d.set(Expand, 2, fmt.Sprintf("%d replicas per arm, %d needed", n, r.MinReplicas))
	case d.MutatedPass.Rate > d.BaselinePass.Rate:
		if !d.MutatedPass.Wilson.Overlaps(d.BaselinePass.Wilson) && d.FisherP < alpha {
			return d.set(Adopt, 3, fmt.Sprintf("the mutated arm passes more often, Wilson intervals apart, Fisher p = %.4g", d.FisherP))
		}
		return undecided(3, fmt.Sprintf("the mutated arm passes more often but not clearly (Fisher p = %.4g)", d.FisherP))
	case d.Metric == nil:
		return d.set(Skip, 4, "equal pass rates and no metric to compare")
	}
	m := d.Metric
	if m.Reduction < r.MinReduction {
		return d.set(Skip, 5, fmt.Sprintf("the median is lowered by %.1f%%, under %.0f%%", m.Reduction*100, r.MinReduction*100))
	}
	need := len(mut.Metric)/2 + 1
	if m.Below < need {
		return d.set(Skip, 6, fmt.Sprintf("%d of %d mutated replicas are below the baseline median", m.Below, len(mut.Metric)))
	}
	switch {
	case m.Below == need:
		return undecided(7, fmt.Sprintf("a bare majority (%d of %d) below the baseline median", m.Below, len(mut.Metric)))
	case m.Mutated.Q3 >= m.Baseline.Q1:
		return undecided(7, fmt.Sprintf("the interquartile bands touch (mutated Q3 %.4g >= baseline Q1 %.4g)", m.Mutated.Q3, m.Baseline.Q1))
	case m.Bootstrap.Contains(0):
		return undecided(7, fmt.Sprintf("the bootstrap interval [%.4g, %.4g] holds 0", m.Bootstrap.Lo, m.Bootstrap.Hi))
	case !(m.MannWhitney.P < alpha):
		return undecided(7, fmt.Sprintf("Mann-Whitney p = %.4g", m.MannWhitney.P))
	}
	return d.set(Adopt, 8, fmt.Sprintf("the median is lowered by %.1f%% with separated bands, bootstrap [%.4g, %.4g], Mann-Whitney p = %.4g", m.Reduction*100, m.Bootstrap.Lo, m.Bootstrap.Hi, m.MannWhitney.P))
}

func (d Decision) set(verdict string, step int, reason string) Decision {
	d.Verdict, d.Step, d.Reason = verdict, step, reason
	return d
}

func (r Rule) compareMetric(base, mut []float64) *MetricStats {
	m := &MetricStats{Baseline: Summarize(base), Mutated: Summarize(mut)}
	if m.Baseline.Median != 0 {
		m.Reduction = 1 - m.Mutated.Median/m.Baseline.Median
	}
	for _, v := range mut {
		if v < m.Baseline.Median {
			m.Below++
		}
	}
	m.Bootstrap = BootstrapMedianDiff(base, mut, r.Resamples, r.Confidence, r.Seed)
	m.MannWhitney = MannWhitneyU(mut, base)
	if math.IsNaN(m.Reduction) {
		m.Reduction = 0
	}
	return m
}
