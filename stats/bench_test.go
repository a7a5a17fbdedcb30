package stats

import "testing"

func benchArms(n int) (Arm, Arm) {
	base, mut := Arm{}, Arm{}
	for i := range n {
		base.Passed = append(base.Passed, i%4 != 0)
		mut.Passed = append(mut.Passed, i%3 != 0)
		base.Metric = append(base.Metric, float64(100+i%17))
		mut.Metric = append(mut.Metric, float64(80+i%13))
	}
	return base, mut
}

// BenchmarkDecide is the rule on 50 replicas per arm with the default 2000
// bootstrap resamples: the statistics' share of a replicated A/B replay.
func BenchmarkDecide(b *testing.B) {
	base, mut := benchArms(50)
	r := DefaultRule()
	for b.Loop() {
		_ = r.Decide(base, mut)
	}
}
