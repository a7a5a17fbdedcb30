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
// The rule compares the metric over the passing replicas only: a failed replica
// is its own outcome, never a value of the metric.
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

// Successful returns the metric values of the passing replicas (all of Metric
// when it is not one value per replica).
func (a Arm) Successful() []float64 {
	if len(a.Metric) != len(a.Passed) {
		return a.Metric
	}
	var out []float64
	for i, v := range a.Metric {
		if a.Passed[i] && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// Rule is the decision rule's parameters.
type Rule struct {
	// Alpha bounds the chance that the rule decides ADOPT or REJECT when the arms
	// do not differ (0.05), over both endpoints, both directions and, in a
	// sequential design, every look.
	Alpha float64 `json:"alpha"`
	// Margin is the drop a REJECT must show to be beyond: a fraction of the pass
	// rate (absolute) and of the metric (relative). 0 rejects on any significant
	// drop.
	Margin float64 `json:"margin"`
	// MaxReplicas per arm from which an undecided case is a skip, not an expand
	// (in a fixed design; a sequential one skips at its last look).
	MaxReplicas int `json:"max_replicas"`
	// Looks are the planned looks of a sequential design (see PlannedLooks); nil
	// for a fixed design, one look at Alpha.
	Looks []int `json:"looks,omitempty"`
	// Spending is the alpha-spending function of a sequential design.
	Spending string `json:"spending,omitempty"`
	// Resamples and Seed of the bootstrap interval (reported, not deciding).
	Resamples int    `json:"resamples"`
	Seed      uint64 `json:"seed"`
}

// DefaultRule is the rule replay applies unless told otherwise.
func DefaultRule() Rule {
	return Rule{Alpha: 0.05, MaxReplicas: 10, Spending: SpendOBrienFleming, Resamples: 2000, Seed: 1}
}

// Sequential returns r with the planned looks of --until-decided from first to
// max replicas per arm.
func (r Rule) Sequential(first, max int) Rule {
	r.Looks = PlannedLooks(first, max)
	r.MaxReplicas = max
	if r.Spending == "" {
		r.Spending = SpendOBrienFleming
	}
	return r
}

// Validate checks the rule's parameters.
func (r Rule) Validate() error {
	switch {
	case !(r.Alpha > 0 && r.Alpha < 0.5):
		return fmt.Errorf("alpha %g: give a number above 0 and below 0.5, for example 0.05", r.Alpha)
	case !(r.Margin >= 0 && r.Margin < 1):
		return fmt.Errorf("margin %g: give a fraction from 0 to below 1, for example 0.05 for 5%%", r.Margin)
	case r.Resamples < 1:
		return fmt.Errorf("%d bootstrap resamples: give at least 1", r.Resamples)
	case r.Spending != "" && r.Spending != SpendOBrienFleming && r.Spending != SpendPocock:
		return fmt.Errorf("spending %q: give %s or %s", r.Spending, SpendOBrienFleming, SpendPocock)
	}
	return nil
}

// Text is the rule in words, with its parameters, as the reports print it.
func (r Rule) Text() string {
	ae := endpointLevel(r.Alpha, 2)
	margin := "any significant drop"
	if r.Margin > 0 {
		margin = fmt.Sprintf("a drop significantly beyond the margin of %g (pass rate: absolute; metric: relative)", r.Margin)
	}
	steps := []string{
		fmt.Sprintf("Pass rate worse: if the mutated arm passes significantly less often (Boschloo's exact unconditional test, one-sided, at level/2; with a margin, the upper bound of Newcombe's interval of the difference below -margin), reject. A reject needs %s.", margin),
		"Metric worse: if the pass rates do not differ significantly and the metric of the passing replicas is significantly higher in the mutated arm (Wilcoxon-Mann-Whitney rank-sum test, exact up to 60 values, one-sided, at level/2; with a margin, against the mutated values divided by 1 + margin), reject.",
		"Pass rate better: if the mutated arm passes significantly more often (one-sided, at level/2) and its metric is not significantly worse, adopt; with a significantly worse metric it is a trade-off, not adopted.",
		"Metric better: if the pass rates do not differ significantly and the metric of the passing replicas is significantly lower in the mutated arm (one-sided, at level/2), adopt.",
		"Otherwise no difference is detected: skip when, in a fixed design, neither endpoint shows any sign of a difference (every one-sided p-value at least 1/2), or when no more replicas are planned (the maximum per arm, or the last look), else expand.",
	}
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "Level: alpha = %g bounds the chance of any ADOPT or REJECT between arms that do not differ. It is split over the two endpoints (pass rate, metric) by Sidak: each is tested two-sided at level %.4g (%.4g per direction) at a single look. %s\n", r.Alpha, ae, ae/2, r.designText())
	return b.String()
}

// Decision is the verdict on two arms with the statistics it rests on.
type Decision struct {
	Verdict string `json:"verdict"`
	// Step is the rule's step (1-based) that decided; Reason says why in words.
	Step   int    `json:"step"`
	Reason string `json:"reason"`
	// Alpha is the rule's overall level; Look where this decision stands in the
	// design; EndpointLevel the two-sided level each endpoint was tested at.
	Alpha         float64 `json:"alpha"`
	Look          Look    `json:"look"`
	EndpointLevel float64 `json:"endpoint_level"`
	// Confidence is the level of the reported intervals (1 - EndpointLevel).
	Confidence float64 `json:"confidence"`

	BaselinePass RateStats `json:"baseline_pass"`
	MutatedPass  RateStats `json:"mutated_pass"`
	// FisherP is Fisher's exact test, two-sided (descriptive).
	FisherP float64      `json:"fisher_p"`
	Pass    PassTest     `json:"pass_test"`
	Metric  *MetricStats `json:"metric,omitempty"`
	// Detectable is what this many replicas could detect with 80% power.
	Detectable Detectable `json:"detectable"`
}

// PassTest is the pass-rate endpoint's test.
type PassTest struct {
	Test  string `json:"test"`
	Tails Tails  `json:"tails"`
	// Diff is the mutated minus the baseline pass rate, Interval its Newcombe
	// hybrid score interval at confidence 1 - EndpointLevel.
	Diff     float64  `json:"diff"`
	Interval Interval `json:"interval"`
	Worse    bool     `json:"worse"`
	Better   bool     `json:"better"`
}

// RateStats is a pass rate with its Wilson interval.
type RateStats struct {
	Passed int      `json:"passed"`
	N      int      `json:"n"`
	Rate   float64  `json:"rate"`
	Wilson Interval `json:"wilson"`
}

// MetricStats compares the arms' metric over their passing replicas.
type MetricStats struct {
	Test     string  `json:"test"`
	Baseline Summary `json:"baseline"`
	Mutated  Summary `json:"mutated"`
	// Reduction is 1 - mutated median / baseline median (0 when the baseline's is 0).
	Reduction float64 `json:"reduction"`
	// Tails are the rank-sum test's one-sided p-values (Greater: the mutated
	// arm's metric is higher, i.e. worse); WorseP is the worse tail against the
	// margin.
	Tails  Tails   `json:"tails"`
	WorseP float64 `json:"worse_p"`
	Worse  bool    `json:"worse"`
	Better bool    `json:"better"`
	// Bootstrap is the interval of median(mutated) - median(baseline) at
	// confidence 1 - EndpointLevel; MannWhitney the two-sided normal-approximation
	// test (descriptive).
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

// Decide applies the rule to the baseline and mutated arms, with the
// descriptive statistics (intervals, bootstrap) the reports show.
func (r Rule) Decide(base, mut Arm) Decision {
	d := r.decide(base, mut)
	level := d.EndpointLevel
	if level <= 0 { // a look that spends nothing: the intervals at the final level
		level = endpointLevel(r.Alpha, 2)
	}
	conf := 1 - level
	d.Confidence = conf
	d.BaselinePass.Wilson, d.MutatedPass.Wilson = Wilson(d.BaselinePass.Passed, d.BaselinePass.N, conf), Wilson(d.MutatedPass.Passed, d.MutatedPass.N, conf)
	d.FisherP = FisherExact(d.MutatedPass.Passed, d.MutatedPass.N-d.MutatedPass.Passed, d.BaselinePass.Passed, d.BaselinePass.N-d.BaselinePass.Passed)
	if m := d.Metric; m != nil {
		b, u := base.Successful(), mut.Successful()
		m.Bootstrap = BootstrapMedianDiff(b, u, r.Resamples, conf, r.Seed)
		m.MannWhitney = MannWhitneyU(u, b)
	}
	d.Detectable = r.detectable(d)
	return d
}

// decide is the rule itself: the tests and the verdict, nothing descriptive.
func (r Rule) decide(base, mut Arm) Decision {
	n := min(len(base.Passed), len(mut.Passed))
	look := r.lookAt(n)
	b, u := base.Successful(), mut.Successful()
	// The number of endpoints is the design's (is there a metric at all), never
	// the data's: alpha is split the same way whatever the replicas show.
	endpoints := 1
	if len(base.Metric) > 0 || len(mut.Metric) > 0 {
		endpoints = 2
	}
	d := Decision{Alpha: r.Alpha, Look: look, EndpointLevel: endpointLevel(look.Level, endpoints)}
	d.BaselinePass, d.MutatedPass = rateOf(base, 0), rateOf(mut, 0)
	half := d.EndpointLevel / 2
	d.Pass = r.passTest(d.MutatedPass, d.BaselinePass, d.EndpointLevel)
	if len(b) > 0 && len(u) > 0 {
		d.Metric = r.metricTest(b, u, half)
	}
	return r.verdict(d, n)
}

// verdict applies the rule's steps to the tests of d, n replicas per arm.
func (r Rule) verdict(d Decision, n int) Decision {
	look, half := d.Look, d.EndpointLevel/2
	p, m := d.Pass, d.Metric
	mWorse, mBetter := m != nil && m.Worse, m != nil && m.Better
	// No sign of a difference at all (every one-sided p-value at least 1/2) in a
	// fixed design: more replicas are not expected to decide. (A sequential
	// design goes on to its planned looks.)
	noSign := p.Tails.Less >= 0.5 && p.Tails.Greater >= 0.5 && (m == nil || (m.WorseP >= 0.5 && m.Tails.Less >= 0.5))
	undecided := func(why string) Decision {
		if noSign && look.Level > 0 && len(r.Looks) <= 1 && !look.Final && n < r.MaxReplicas {
			return d.set(Skip, 5, why+"; no sign of a difference in either endpoint")
		}
		if look.Final || n >= r.MaxReplicas {
			return d.set(Skip, 5, why+fmt.Sprintf("; no difference detected at alpha %g with %d replicas per arm", r.Alpha, n))
		}
		return d.set(Expand, 5, why+"; more replicas are planned and may decide")
	}
	switch {
	case look.Level == 0:
		return undecided(fmt.Sprintf("look %d of %d at %d replicas per arm spends no alpha (no data could decide this early)", look.K, look.Of, n))
	case p.Worse:
		return d.set(Reject, 1, fmt.Sprintf("the mutated arm passes %d/%d, the baseline %d/%d: significantly less often (one-sided p = %.4g < %.4g)", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N, p.Tails.Less, half))
	case mWorse && !p.Better:
		return d.set(Reject, 2, fmt.Sprintf("equal pass rates within noise, and the metric of the passing replicas is significantly higher (median %.4g against %.4g, one-sided p = %.4g < %.4g)", m.Mutated.Median, m.Baseline.Median, m.WorseP, half))
	case p.Better && mWorse:
		return undecided(fmt.Sprintf("a trade-off: the mutated arm passes significantly more often (p = %.4g) but its metric is significantly higher (p = %.4g)", p.Tails.Greater, m.WorseP))
	case p.Better:
		return d.set(Adopt, 3, fmt.Sprintf("the mutated arm passes %d/%d, the baseline %d/%d: significantly more often (one-sided p = %.4g < %.4g), with no significantly worse metric", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N, p.Tails.Greater, half))
	case mBetter:
		return d.set(Adopt, 4, fmt.Sprintf("equal pass rates within noise, and the metric of the passing replicas is significantly lower (median %.4g against %.4g, %.1f%% lower, one-sided p = %.4g < %.4g)", m.Mutated.Median, m.Baseline.Median, m.Reduction*100, m.Tails.Less, half))
	}
	why := fmt.Sprintf("pass rates %d/%d against %d/%d (one-sided p %.3g / %.3g)", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N, p.Tails.Less, p.Tails.Greater)
	if m != nil {
		why += fmt.Sprintf(", metric medians %.4g against %.4g (one-sided p %.3g / %.3g)", m.Mutated.Median, m.Baseline.Median, m.WorseP, m.Tails.Less)
	} else {
		why += ", no metric to compare (an arm has no passing replica)"
	}
	return undecided(why + fmt.Sprintf(", none below %.4g", half))
}

// passTest tests the pass rates at two-sided level: each direction at level/2.
func (r Rule) passTest(mut, base RateStats, level float64) PassTest {
	t := PassTest{Test: "Boschloo's exact unconditional test, one-sided", Diff: mut.Rate - base.Rate,
		Tails:    BoschlooTails(mut.Passed, mut.N-mut.Passed, base.Passed, base.N-base.Passed),
		Interval: Newcombe(mut.Passed, mut.N, base.Passed, base.N, 1-level)}
	if mut.N == 0 || base.N == 0 {
		return t
	}
	t.Better = t.Tails.Greater < level/2
	if r.Margin > 0 {
		t.Test += fmt.Sprintf("; the drop against the margin %g by Newcombe's interval", r.Margin)
		t.Worse = t.Interval.Hi < -r.Margin
	} else {
		t.Worse = t.Tails.Less < level/2
	}
	return t
}

// metricTest compares the passing replicas' metric at one-sided level half each way.
func (r Rule) metricTest(base, mut []float64, half float64) *MetricStats {
	m := &MetricStats{Test: "Wilcoxon-Mann-Whitney rank-sum test over the passing replicas, one-sided", Baseline: Summarize(base), Mutated: Summarize(mut)}
	if m.Baseline.Median != 0 {
		m.Reduction = 1 - m.Mutated.Median/m.Baseline.Median
	}
	if math.IsNaN(m.Reduction) || math.IsInf(m.Reduction, 0) {
		m.Reduction = 0
	}
	m.Tails = RankTails(mut, base)
	m.WorseP = m.Tails.Greater
	if r.Margin > 0 {
		shifted := make([]float64, len(mut))
		for i, v := range mut {
			shifted[i] = v / (1 + r.Margin)
		}
		m.WorseP = RankTails(shifted, base).Greater
	}
	m.Worse, m.Better = m.WorseP < half, m.Tails.Less < half
	return m
}

func (d Decision) set(verdict string, step int, reason string) Decision {
	d.Verdict, d.Step, d.Reason = verdict, step, reason
	return d
}
