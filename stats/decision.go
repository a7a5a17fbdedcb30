package stats

import (
	"fmt"
	"math"
	"strings"
)

// Verdicts of the decision rule. Skip and Expand are the verdicts of the
// planned-look rule that came before the anytime-valid one: a result file may
// still hold them, and readers treat both as undecided.
const (
	Adopt     = "adopt"
	Reject    = "reject"
	Undecided = "undecided"
	Skip      = "skip"
	Expand    = "expand"
)

// IsUndecided reports whether verdict decides nothing (undecided, or an older
// result's skip or expand).
func IsUndecided(verdict string) bool {
	return verdict == Undecided || verdict == Skip || verdict == Expand
}

// Tests is how many e-processes the rule watches (pass rate worse, composite
// worse, composite better); each must reach Tests/alpha to decide, so by
// Ville's inequality and the union bound the chance of any false decision, at
// any number of replicas, is at most alpha.
const Tests = 3

// Arm is one arm's replicas, in replica order: whether each passed, and one
// value per replica of the metric the mutation is meant to lower (Metric may be
// empty: outcome only). Replica i of one arm is paired with replica i of the
// other.
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

func (a Arm) value(i int) float64 {
	if i < len(a.Metric) {
		return a.Metric[i]
	}
	return math.NaN()
}

// Rule is the decision rule's parameters.
type Rule struct {
	// Alpha bounds the chance that the rule ever decides ADOPT or REJECT when
	// the arms do not differ (0.05), however many replicas are added and
	// whenever the user stops.
	Alpha float64 `json:"alpha"`
	// Margin is the drop a REJECT must show to be beyond: of the pass rate
	// (absolute) and of the metric (relative). 0 rejects any drop shown.
	Margin float64 `json:"margin"`
	// Resolution is the metric's recorded resolution (0.1 for seconds): values
	// are rounded to it before they are compared, so equal printed values tie.
	Resolution float64 `json:"resolution"`
	// MaxReplicas per arm caps --until-decided.
	MaxReplicas int `json:"max_replicas"`
}

// DefaultRule is the rule replay applies unless told otherwise.
func DefaultRule() Rule { return Rule{Alpha: 0.05, MaxReplicas: 40} }

// Validate checks the rule's parameters.
func (r Rule) Validate() error {
	switch {
	case !(r.Alpha > 0 && r.Alpha < 0.5):
		return fmt.Errorf("alpha %g: give a number above 0 and below 0.5, for example 0.05", r.Alpha)
	case !(r.Margin >= 0 && r.Margin < 1):
		return fmt.Errorf("margin %g: give a fraction from 0 to below 1, for example 0.05 for 5%%", r.Margin)
	case !(r.Resolution >= 0) || math.IsInf(r.Resolution, 0):
		return fmt.Errorf("resolution %g: give 0 (exact) or a positive step, for example 0.1", r.Resolution)
	}
	return nil
}

// Threshold is the e-value a test must reach to decide: Tests / alpha.
func (r Rule) Threshold() float64 { return Tests / r.Alpha }

// Text is the rule in words, with its parameters, as the reports print it.
func (r Rule) Text() string {
	thr := r.Threshold()
	margin := ""
	if r.Margin > 0 {
		margin = fmt.Sprintf(" With a margin of %g: the pass rate only when its %g%% confidence sequence of the difference lies wholly below -%g; the metric compared after dividing the mutated values by %g.", r.Margin, 100*(1-r.Alpha/Tests), r.Margin, 1+r.Margin)
	}
	steps := []string{
		fmt.Sprintf("Pass rate worse: pair replica i of each arm; among the pairs where exactly one replica passed, if the baseline's wins are evidence (a sign e-value of at least %.4g) that the mutated arm passes less often, reject.%s", thr, margin),
		fmt.Sprintf("Outcome worse (one endpoint, no survivorship): compare each pair on a composite outcome, where a failed replica is worse than any that passed and two passing replicas are compared by the metric rounded to its resolution (lower is better; equal values and two failures tie); if the baseline's wins reach an e-value of %.4g, reject.", thr),
		fmt.Sprintf("Outcome better: if the mutated arm's wins on the same composite outcome reach an e-value of %.4g, adopt. A failure counts against the mutated arm in every pair it loses, so a template that fails more often must win that back on the pairs where both pass.", thr),
		"Otherwise undecided: the evidence does not reach the threshold yet. Add replicas (--more N, or the same command again) to go on; the guarantee holds however often you do.",
	}
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "\nLevel: alpha = %g bounds the chance of any ADOPT or REJECT between arms that do not differ, at any number of replicas and whenever you stop: each of the three tests is an e-process, a bet against \"no difference\" that grows only when the replicas keep disagreeing one way, and it decides only at %d/alpha = %.4g, which it reaches with chance at most alpha/%d when the arms do not differ (Ville's inequality).\n", r.Alpha, Tests, thr, Tests)
	return b.String()
}

// Decision is the verdict on two arms with the statistics it rests on. Every
// interval is a confidence sequence at confidence 1 - alpha: it holds the true
// value with that chance at every number of replicas at once.
type Decision struct {
	Verdict string `json:"verdict"`
	// Step is the rule's step (1-based) that decided; Reason says why in words.
	Step   int     `json:"step"`
	Reason string  `json:"reason"`
	Alpha  float64 `json:"alpha"`
	// Threshold is the e-value a test must reach: Tests / alpha.
	Threshold Maybe `json:"threshold"`
	// Pairs is how many replica pairs were compared.
	Pairs int `json:"pairs"`

	BaselinePass RateStats     `json:"baseline_pass"`
	MutatedPass  RateStats     `json:"mutated_pass"`
	Pass         PassTest      `json:"pass_test"`
	Composite    CompositeTest `json:"composite_test"`
	// Metric describes the metric; nil when no pair had both replicas pass.
	Metric *MetricStats `json:"metric,omitempty"`
	// More estimates how many more replicas per arm would decide (undecided only).
	More *More `json:"more,omitempty"`
}

// RateStats is a pass rate with its confidence sequence.
type RateStats struct {
	Passed   int      `json:"passed"`
	N        int      `json:"n"`
	Rate     float64  `json:"rate"`
	Interval Interval `json:"interval"`
}

// PassTest is the pass-rate test on the pairs where exactly one replica passed.
type PassTest struct {
	Test string `json:"test"`
	// MutatedOnly and BaselineOnly count the pairs where only that arm's replica passed.
	MutatedOnly  int `json:"mutated_only"`
	BaselineOnly int `json:"baseline_only"`
	// EWorse is the e-value that the mutated arm passes less often.
	EWorse Maybe `json:"e_worse"`
	// Diff is the mutated minus the baseline pass rate, Interval its confidence sequence.
	Diff     Maybe    `json:"diff"`
	Interval Interval `json:"interval"`
	Worse    bool     `json:"worse"`
}

// CompositeTest is the composite-outcome test: failure worst, then the metric.
type CompositeTest struct {
	Test         string  `json:"test"`
	Resolution   float64 `json:"resolution"`
	MutatedWins  int     `json:"mutated_wins"`
	BaselineWins int     `json:"baseline_wins"`
	Ties         int     `json:"ties"`
	// EWorse and EBetter are the e-values that the mutated arm is worse, better.
	EWorse  Maybe `json:"e_worse"`
	EBetter Maybe `json:"e_better"`
	// WinShare is the mutated arm's share of the pairs that did not tie (NaN:
	// none), Interval its confidence sequence.
	WinShare Maybe    `json:"win_share"`
	Interval Interval `json:"interval"`
	Worse    bool     `json:"worse"`
	Better   bool     `json:"better"`
}

// MetricStats describes the metric (it decides only inside the composite test).
type MetricStats struct {
	// Baseline and Mutated summarize the passing replicas.
	Baseline Summary `json:"baseline"`
	Mutated  Summary `json:"mutated"`
	// Reduction is 1 - mutated median / baseline median (NaN when not defined).
	Reduction Maybe `json:"reduction"`
	// BothPassed counts the pairs where both replicas passed; Shift is the
	// confidence sequence of the median of their differences (mutated minus
	// baseline, rounded); a side too few pairs bound is infinite.
	BothPassed int      `json:"both_passed"`
	Shift      Interval `json:"shift"`
}

// More is how many more replicas per arm would likely decide, if the
// difference seen so far is real.
type More struct {
	// Replicas per arm to add; 0 when no number is given (Text says why).
	Replicas int    `json:"replicas"`
	Text     string `json:"text"`
}

// MoreCap is the most replicas per arm More will estimate.
const MoreCap = 1000

// Decide applies the rule to the baseline and mutated arms, replica i of one
// against replica i of the other.
func (r Rule) Decide(base, mut Arm) Decision {
	return r.DecideStratified([]Arm{base}, []Arm{mut})
}

// DecideStratified applies the rule to a corpus: base[k] and mut[k] are the arms
// of pipeline k, paired within their pipeline. The pairs of every pipeline feed
// one e-process: under no difference each untied pair is won by either arm with
// chance 1/2 within its own pipeline, however the pipelines differ, so the
// pipelines are strata without any test of their own.
func (r Rule) DecideStratified(base, mut []Arm) Decision {
	if r.Alpha == 0 {
		r.Alpha = DefaultRule().Alpha
	}
	d := Decision{Alpha: r.Alpha, Threshold: Maybe(r.Threshold())}
	var bp, bn, mp, mn int
	var diffs, bVals, mVals []float64
	var p PassTest
	var c CompositeTest
	for k := range base {
		b, u := base[k], mut[k]
		bp, bn, mp, mn = bp+b.Passes(), bn+len(b.Passed), mp+u.Passes(), mn+len(u.Passed)
		bVals, mVals = append(bVals, b.Successful()...), append(mVals, u.Successful()...)
		for i := range min(len(b.Passed), len(u.Passed)) {
			d.Pairs++
			bOK, mOK := b.Passed[i], u.Passed[i]
			switch {
			case bOK && !mOK:
				p.BaselineOnly++
			case mOK && !bOK:
				p.MutatedOnly++
			}
			switch ComparePair(bOK, mOK, b.value(i), u.value(i), r.Resolution, 1) {
			case MutatedWins:
				c.MutatedWins++
			case BaselineWins:
				c.BaselineWins++
			default:
				c.Ties++
			}
			if bOK && mOK && !math.IsNaN(b.value(i)) && !math.IsNaN(u.value(i)) {
				diffs = append(diffs, RoundTo(RoundTo(u.value(i), r.Resolution)-RoundTo(b.value(i), r.Resolution), r.Resolution))
			}
		}
	}
	d.BaselinePass, d.MutatedPass = r.rate(bp, bn), r.rate(mp, mn)
	p.Test = "sign e-process on the pairs where exactly one replica passed (mixture over the win rate), one-sided"
	if len(base) > 1 {
		p.Test += "; pairs within each pipeline"
	}
	p.EWorse = Maybe(SignE(p.BaselineOnly, p.MutatedOnly))
	p.Diff = Maybe(d.MutatedPass.Rate - d.BaselinePass.Rate)
	if bn == 0 || mn == 0 {
		p.Diff = Maybe(math.NaN())
	}
	p.Interval = pairedDiffCS(p.MutatedOnly, p.BaselineOnly, d.Pairs, r.Alpha)
	if r.Margin > 0 {
		p.Test += fmt.Sprintf("; against the margin %g by the confidence sequence of the difference at %g%%", r.Margin, 100*(1-r.Alpha/Tests))
		p.Worse = d.Pairs > 0 && pairedDiffCS(p.MutatedOnly, p.BaselineOnly, d.Pairs, r.Alpha/Tests).Hi < -r.Margin
	} else {
		p.Worse = p.EWorse >= d.Threshold
	}
	d.Pass = p

	c.Test = "sign e-process on a composite outcome per pair (failure worst, then the metric, lower is better), one-sided each way"
	c.Resolution = r.Resolution
	worseW, worseL := c.BaselineWins, c.MutatedWins
	if r.Margin > 0 {
		worseW, worseL = r.compositeBeyondMargin(base, mut)
		c.Test += fmt.Sprintf("; a worse outcome only beyond the margin %g (mutated metric divided by %g)", r.Margin, 1+r.Margin)
	}
	c.EWorse, c.EBetter = Maybe(SignE(worseW, worseL)), Maybe(SignE(c.MutatedWins, c.BaselineWins))
	c.WinShare = Maybe(math.NaN())
	if untied := c.MutatedWins + c.BaselineWins; untied > 0 {
		c.WinShare = Maybe(float64(c.MutatedWins) / float64(untied))
	}
	c.Interval = RateCS(c.MutatedWins, c.BaselineWins, r.Alpha)
	c.Worse, c.Better = c.EWorse >= d.Threshold, c.EBetter >= d.Threshold
	d.Composite = c

	if len(bVals) > 0 && len(mVals) > 0 {
		m := &MetricStats{Baseline: Summarize(rounded(bVals, r.Resolution)), Mutated: Summarize(rounded(mVals, r.Resolution)), Reduction: Maybe(math.NaN()), BothPassed: len(diffs)}
		if m.Baseline.Median != 0 {
			m.Reduction = Maybe(1 - m.Mutated.Median/m.Baseline.Median)
		}
		m.Shift = MedianShiftCS(diffs, r.Alpha)
		d.Metric = m
	}
	return r.verdict(d)
}

// compositeBeyondMargin counts the composite test's worse direction with the
// mutated metric divided by 1 + margin: baseline wins, mutated wins.
func (r Rule) compositeBeyondMargin(base, mut []Arm) (int, int) {
	w, l := 0, 0
	for k := range base {
		b, u := base[k], mut[k]
		for i := range min(len(b.Passed), len(u.Passed)) {
			switch ComparePair(b.Passed[i], u.Passed[i], b.value(i), u.value(i), r.Resolution, 1+r.Margin) {
			case BaselineWins:
				w++
			case MutatedWins:
				l++
			}
		}
	}
	return w, l
}

func (r Rule) rate(k, n int) RateStats {
	rs := RateStats{Passed: k, N: n, Interval: RateCS(k, n-k, r.Alpha)}
	if n > 0 {
		rs.Rate = float64(k) / float64(n)
	}
	return rs
}

// pairedDiffCS is a confidence sequence at 1 - a for the mutated minus the
// baseline pass rate from n pairs, of which mOnly and bOnly differ in outcome:
// the difference is r (2q - 1), with r the share of pairs that differ and q the
// mutated arm's share of them; each has its own sequence at 1 - a/2.
func pairedDiffCS(mOnly, bOnly, n int, a float64) Interval {
	if n == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	disc := mOnly + bOnly
	rs := RateCS(disc, n-disc, a/2)
	qs := RateCS(mOnly, bOnly, a/2)
	gLo, gHi := 2*qs.Lo-1, 2*qs.Hi-1
	lo := math.Min(rs.Lo*gLo, rs.Hi*gLo)
	hi := math.Max(rs.Lo*gHi, rs.Hi*gHi)
	return Interval{Lo: lo, Hi: hi}
}

// verdict applies the rule's steps to the tests of d.
func (r Rule) verdict(d Decision) Decision {
	p, c, thr := d.Pass, d.Composite, d.Threshold
	counts := fmt.Sprintf("the mutated arm passes %d/%d, the baseline %d/%d", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N)
	switch {
	case p.Worse:
		why := fmt.Sprintf("%s: of the %d pairs where exactly one replica passed, the baseline's replica did in %d; that is evidence %s against equal pass rates, beyond %s", counts, p.BaselineOnly+p.MutatedOnly, p.BaselineOnly, eText(float64(p.EWorse)), eText(float64(thr)))
		if r.Margin > 0 {
			why = fmt.Sprintf("%s: the pass-rate difference lies below -%g with confidence %g%% however long the experiment runs", counts, r.Margin, 100*(1-r.Alpha/Tests))
		}
		return d.set(Reject, 1, why)
	case c.Worse:
		return d.set(Reject, 2, fmt.Sprintf("%s; on the composite outcome (failure worst, then %s) the baseline won %d pairs, the mutated arm %d (%d tied): evidence %s that the mutated arm is worse, beyond %s", counts, "the metric", c.BaselineWins, c.MutatedWins, c.Ties, eText(float64(c.EWorse)), eText(float64(thr))))
	case c.Better:
		return d.set(Adopt, 3, fmt.Sprintf("%s; on the composite outcome (failure worst, then %s) the mutated arm won %d pairs, the baseline %d (%d tied): evidence %s that the mutated arm is better, beyond %s", counts, "the metric", c.MutatedWins, c.BaselineWins, c.Ties, eText(float64(c.EBetter)), eText(float64(thr))))
	}
	d.More = r.more(d)
	return d.set(Undecided, 4, fmt.Sprintf("%s; on the composite outcome the mutated arm won %d pairs, the baseline %d (%d tied): the strongest evidence, %s, is below %s; %s", counts, c.MutatedWins, c.BaselineWins, c.Ties, eText(float64(max(p.EWorse, c.EWorse, c.EBetter))), eText(float64(thr)), d.More.Text))
}

// eText prints an e-value briefly.
func eText(e float64) string {
	switch {
	case e >= 1e6:
		return "over 1,000,000"
	case e >= 100:
		return fmt.Sprintf("%.0f", e)
	}
	return fmt.Sprintf("%.3g", e)
}

// more estimates how many more pairs would reach the threshold if the split of
// wins, losses and ties seen so far held: for each test that leans its way.
func (r Rule) more(d Decision) *More {
	best := -1
	for _, t := range [][2]int{{d.Pass.BaselineOnly, d.Pass.MutatedOnly}, {d.Composite.BaselineWins, d.Composite.MutatedWins}, {d.Composite.MutatedWins, d.Composite.BaselineWins}} {
		if k := morePairs(t[0], t[1], d.Pairs, float64(d.Threshold)); k > 0 && (best < 0 || k < best) {
			best = k
		}
	}
	switch {
	case d.Pairs == 0:
		return &More{Text: "no replica pair has run yet"}
	case best > 0:
		return &More{Replicas: best, Text: fmt.Sprintf("could be luck: about %d more replicas per arm would tell, if the difference seen so far is real (--more %d)", best, best)}
	case d.Composite.MutatedWins == d.Composite.BaselineWins && d.Pass.MutatedOnly == d.Pass.BaselineOnly:
		return &More{Text: "no sign of a difference so far: more replicas would only tell if there is one they have not shown yet"}
	}
	return &More{Text: fmt.Sprintf("the difference seen so far is small: even %d more replicas per arm might not tell", MoreCap)}
}

// morePairs is about the smallest number of more pairs at which w wins and l
// losses out of n pairs, scaled up in the same proportions, reach e-value thr
// (found by doubling, then bisection: the e-value grows with the pairs when the
// proportions hold); 0 when they lean the other way or need more than MoreCap.
func morePairs(w, l, n int, thr float64) int {
	if w <= l || n == 0 {
		return 0
	}
	q := float64(w) / float64(w+l)
	untied := float64(w+l) / float64(n)
	reaches := func(k int) bool {
		u := math.Round(untied * float64(n+k))
		ww := int(math.Round(q * u))
		return SignE(ww, int(u)-ww) >= thr
	}
	hi := 1
	for !reaches(hi) {
		if hi >= MoreCap {
			return 0
		}
		hi = min(hi*2, MoreCap)
	}
	lo := hi / 2 // does not reach (or 0)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if reaches(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func (d Decision) set(verdict string, step int, reason string) Decision {
	d.Verdict, d.Step, d.Reason = verdict, step, reason
	return d
}
