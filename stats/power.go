package stats

import "math"

// Power is the power the smallest detectable effects are computed for.
const Power = 0.8

// Detectable is the smallest effect a decision's replicas could detect with 80%
// power at the level its endpoints were tested at (normal approximations: the
// arcsine transform for pass rates, the asymptotic relative efficiency 3/pi of
// the rank-sum test against a normal shift for the metric). NaN when no effect
// of that kind could be detected.
type Detectable struct {
	// PassRateDrop is the absolute drop from the baseline pass rate.
	PassRateDrop float64 `json:"pass_rate_drop"`
	// MetricChange is the relative change of the baseline median of the metric
	// (0.2 is 20%), from the spread of the passing replicas (IQR / 1.349).
	MetricChange float64 `json:"metric_change"`
}

func (r Rule) detectable(d Decision) Detectable {
	out := Detectable{PassRateDrop: math.NaN(), MetricChange: math.NaN()}
	half := d.EndpointLevel / 2
	n := min(d.BaselinePass.N, d.MutatedPass.N)
	if !(half > 0) || n == 0 {
		return out
	}
	z := normalQuantile(1-half) + normalQuantile(Power)
	out.PassRateDrop = DetectableDrop(d.BaselinePass.Rate, n, z)
	if m := d.Metric; m != nil && m.Baseline.N > 0 && m.Mutated.N > 0 && m.Baseline.Median != 0 {
		sd := (m.Baseline.IQR()*float64(m.Baseline.N) + m.Mutated.IQR()*float64(m.Mutated.N)) / float64(m.Baseline.N+m.Mutated.N) / 1.349
		shift := z * math.Sqrt(1/float64(m.Baseline.N)+1/float64(m.Mutated.N)) * math.Sqrt(math.Pi/3)
		if sd > 0 {
			out.MetricChange = shift * sd / math.Abs(m.Baseline.Median)
		}
	}
	return out
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
