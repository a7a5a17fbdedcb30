package stats

import (
	"fmt"
	"math"
)

// Power is the power the smallest detectable effects are computed for.
const Power = 0.8

// Detectable is the smallest effect a decision's replicas could detect with 80%
// power at the level its endpoints were tested at (normal approximations: the
// arcsine transform for pass rates, the asymptotic relative efficiency 3/pi of
// the rank-sum test against a normal shift for the metric). NaN when no effect
// of that kind could be detected; the notes say why, and Words says it all in
// words.
type Detectable struct {
	// PassRateDrop is the absolute drop from the baseline pass rate.
	PassRateDrop float64 `json:"pass_rate_drop"`
	// MetricChange is the relative change of the baseline median of the metric
	// (0.2 is 20%), from the spread of the passing replicas (IQR / 1.349).
	MetricChange float64 `json:"metric_change"`
	// Replicas is the number of replicas per arm the figures are for (the
	// smaller arm's).
	Replicas int `json:"replicas"`
	// ReplicasForDrop is, when no pass-rate drop is detectable although the
	// baseline passes, how many replicas per arm would detect a drop to 0.
	ReplicasForDrop int `json:"replicas_for_drop,omitempty"`
	// PassRateNote and MetricNote say why a figure is NaN: one of the Detect*
	// reasons, "" when it is a number.
	PassRateNote string `json:"pass_rate_note,omitempty"`
	MetricNote   string `json:"metric_note,omitempty"`
}

// Why a smallest detectable effect is missing (Detectable's notes).
const (
	// DetectNoReplicas: no replica ran in an arm.
	DetectNoReplicas = "no-replicas"
	// DetectTooFew: too few replicas per arm for even the largest effect.
	DetectTooFew = "too-few-replicas"
	// DetectBaselineNone: the baseline passed no replica, so it cannot drop.
	DetectBaselineNone = "baseline-passes-none"
	// DetectNoMetric: an arm has no passing replica, so no metric to compare.
	DetectNoMetric = "no-passing-replica"
	// DetectZeroMedian: the baseline median is 0, so no relative change.
	DetectZeroMedian = "baseline-median-zero"
	// DetectNoSpread: the passing replicas' metric has no spread to size a change by.
	DetectNoSpread = "no-spread"
)

func (r Rule) detectable(d Decision) Detectable {
	out := Detectable{PassRateDrop: math.NaN(), MetricChange: math.NaN()}
	half := d.EndpointLevel / 2
	n := min(d.BaselinePass.N, d.MutatedPass.N)
	out.Replicas = n
	if !(half > 0) || n == 0 {
		out.PassRateNote, out.MetricNote = DetectNoReplicas, DetectNoReplicas
		return out
	}
	z := normalQuantile(1-half) + normalQuantile(Power)
	out.PassRateDrop = DetectableDrop(d.BaselinePass.Rate, n, z)
	switch {
	case d.BaselinePass.Rate == 0:
		out.PassRateNote = DetectBaselineNone
	case math.IsNaN(out.PassRateDrop):
		out.PassRateNote = DetectTooFew
		out.ReplicasForDrop = ReplicasForDrop(d.BaselinePass.Rate, z)
	}
	m := d.Metric
	switch {
	case m == nil || m.Baseline.N == 0 || m.Mutated.N == 0:
		out.MetricNote = DetectNoMetric
		return out
	case m.Baseline.Median == 0:
		out.MetricNote = DetectZeroMedian
		return out
	}
	sd := (m.Baseline.IQR()*float64(m.Baseline.N) + m.Mutated.IQR()*float64(m.Mutated.N)) / float64(m.Baseline.N+m.Mutated.N) / 1.349
	shift := z * math.Sqrt(1/float64(m.Baseline.N)+1/float64(m.Mutated.N)) * math.Sqrt(math.Pi/3)
	if sd > 0 {
		out.MetricChange = shift * sd / math.Abs(m.Baseline.Median)
	} else {
		out.MetricNote = DetectNoSpread
	}
	return out
}

// ReplicasForDrop is the fewest replicas per arm that detect a drop from pass
// rate p to 0 with the power z (= z_{1-level} + z_{power}) implies, by the
// arcsine approximation DetectableDrop uses; 0 when p is 0.
func ReplicasForDrop(p float64, z float64) int {
	phi := 2 * math.Asin(math.Sqrt(p))
	if !(phi > 0) {
		return 0
	}
	n := int(math.Ceil(2 * z * z / (phi * phi)))
	for n > 1 && !math.IsNaN(DetectableDrop(p, n-1, z)) {
		n--
	}
	for math.IsNaN(DetectableDrop(p, n, z)) {
		n++
	}
	return n
}

// Words says d in a sentence: the smallest effects these replicas detect with 80%
// power, and for each that none is detectable, why (and with too few
// replicas, how many would do).
func (d Detectable) Words() string {
	var pass, metric string
	switch {
	case !math.IsNaN(d.PassRateDrop):
		pass = fmt.Sprintf("a pass-rate drop of %.2f from the baseline's", d.PassRateDrop)
	case d.PassRateNote == DetectBaselineNone:
		pass = "no pass-rate drop (the baseline passed none of its replicas, so it cannot drop)"
	case d.PassRateNote == DetectTooFew && d.ReplicasForDrop > 0:
		pass = fmt.Sprintf("no pass-rate drop, not even to 0 (that needs at least %d replicas per arm)", d.ReplicasForDrop)
	case d.PassRateNote == DetectNoReplicas:
		pass = "nothing (an arm ran no replica)"
	default:
		pass = "no pass-rate drop, not even to 0, with these replicas"
	}
	switch {
	case !math.IsNaN(d.MetricChange):
		metric = fmt.Sprintf("a change of the median metric of %.0f%%", d.MetricChange*100)
	case d.MetricNote == DetectNoMetric:
		metric = "no change of the metric (an arm has no passing replica to measure it on)"
	case d.MetricNote == DetectZeroMedian:
		metric = "no relative change of the metric (the baseline median is 0)"
	case d.MetricNote == DetectNoSpread:
		metric = "a change of the metric of unknown size (its passing replicas show no spread to size it by)"
	case d.MetricNote == DetectNoReplicas:
		return "Smallest effects detectable with 80% power: none (an arm ran no replica)."
	default:
		metric = "no change of the metric that can be sized"
	}
	return fmt.Sprintf("Smallest effects %s per arm detect with 80%% power (approximate): %s; %s.", replicasWord(d.Replicas), pass, metric)
}

func replicasWord(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// DetectableDrop is the smallest absolute drop from pass rate p that n
// replicas per arm detect with the power z (= z_{1-level} + z_{power}) implies,
// by the arcsine approximation; NaN when even a drop to 0 would not do.
func DetectableDrop(p float64, n int, z float64) float64 {
	phi := 2 * math.Asin(math.Sqrt(p))
	h := z * math.Sqrt(2/float64(n))
	if phi-h < 0 {
		return math.NaN()
	}
	s := math.Sin((phi - h) / 2)
	return p - s*s
}

// Newcombe is the hybrid score interval (Newcombe's method 10) of the
// difference of two proportions, k1/n1 - k2/n2, at confidence conf, built from
// the Wilson intervals of each.
func Newcombe(k1, n1, k2, n2 int, conf float64) Interval {
	if n1 == 0 || n2 == 0 {
		return Interval{-1, 1}
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	w1, w2 := Wilson(k1, n1, conf), Wilson(k2, n2, conf)
	d := p1 - p2
	return Interval{
		Lo: d - math.Sqrt((p1-w1.Lo)*(p1-w1.Lo)+(w2.Hi-p2)*(w2.Hi-p2)),
		Hi: d + math.Sqrt((w1.Hi-p1)*(w1.Hi-p1)+(p2-w2.Lo)*(p2-w2.Lo)),
	}
}
