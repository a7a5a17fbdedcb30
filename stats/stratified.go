package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// StratifiedResamples is how many within-stratum permutations the stratified
// rank test draws.
const StratifiedResamples = 1999

// VanElterenTails is van Elteren's stratified rank-sum test of the mutated
// arms' values against the baselines', one stratum per pipeline: the statistic
// is the sum over the strata of the mutated arm's rank sum within its stratum
// divided by the stratum's size plus one, its null distribution drawn from
// resamples permutations of the arm labels within each stratum (seeded), the
// p-values (1 + as extreme) / (1 + resamples), which are exact at any size.
// Strata with an empty arm carry no information and are left out.
func VanElterenTails(base, mut [][]float64, resamples int, seed uint64) Tails {
	type stratum struct {
		ranks2 []int
		m      int
		weight float64
	}
	var strata []stratum
	obs := 0.0
	for k := range base {
		if k >= len(mut) || len(base[k]) == 0 || len(mut[k]) == 0 {
			continue
		}
		r2, _ := doubledRanks(mut[k], base[k])
		st := stratum{ranks2: r2, m: len(mut[k]), weight: 1 / float64(len(r2)+1)}
		for _, r := range r2[:st.m] {
			obs += float64(r) * st.weight
		}
		strata = append(strata, st)
	}
	if len(strata) == 0 || resamples < 1 {
		return Tails{math.NaN(), math.NaN()}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	greater, less := 0, 0
	tol := 1e-9 * math.Max(1, math.Abs(obs))
	for range resamples {
		t := 0.0
		for _, st := range strata {
			perm := rng.Perm(len(st.ranks2))
			for _, i := range perm[:st.m] {
				t += float64(st.ranks2[i]) * st.weight
			}
		}
		if t >= obs-tol {
			greater++
		}
		if t <= obs+tol {
			less++
		}
	}
	f := float64(resamples + 1)
	return Tails{Greater: float64(greater+1) / f, Less: float64(less+1) / f}
}

// DecideStratified applies the rule to a corpus: base[k] and mut[k] are the
// arms of pipeline k. The pass rates are tested by the exact stratified
// (Cochran-Mantel-Haenszel) test, the metric of the passing replicas by van
// Elteren's stratified rank test; the steps, the level and its split are the
// single-run rule's. A margin applies to the metric; the pass-rate test of a
// corpus has none.
func (r Rule) DecideStratified(base, mut []Arm) Decision {
	var pooledB, pooledM Arm
	var strata [][4]int
	var mb, mm [][]float64
	n, hasMetric := math.MaxInt, false
	for k := range base {
		b, u := base[k], mut[k]
		pooledB.Passed, pooledM.Passed = append(pooledB.Passed, b.Passed...), append(pooledM.Passed, u.Passed...)
		strata = append(strata, [4]int{u.Passes(), len(u.Passed) - u.Passes(), b.Passes(), len(b.Passed) - b.Passes()})
		mb, mm = append(mb, b.Successful()), append(mm, u.Successful())
		n = min(n, len(b.Passed), len(u.Passed))
		hasMetric = hasMetric || len(b.Metric) > 0 || len(u.Metric) > 0
	}
	if len(base) == 0 {
		n = 0
	}
	endpoints := 1
	if hasMetric {
		endpoints = 2
	}
	look := Look{K: 1, Of: 1, N: n, Level: r.Alpha, Final: true}
	d := Decision{Alpha: r.Alpha, Look: look, EndpointLevel: endpointLevel(r.Alpha, endpoints)}
	d.Confidence = 1 - d.EndpointLevel
	d.BaselinePass, d.MutatedPass = rateOf(pooledB, d.Confidence), rateOf(pooledM, d.Confidence)
	half := d.EndpointLevel / 2
	d.Pass = PassTest{Test: "exact stratified (Cochran-Mantel-Haenszel) test, pipelines as strata, one-sided",
		Diff: d.MutatedPass.Rate - d.BaselinePass.Rate, Tails: StratifiedPassTails(strata),
		Interval: Newcombe(d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N, d.Confidence)}
	d.Pass.Worse, d.Pass.Better = d.Pass.Tails.Less < half, d.Pass.Tails.Greater < half
	var allB, allM []float64
	for k := range mb {
		allB, allM = append(allB, mb[k]...), append(allM, mm[k]...)
	}
	if len(allB) > 0 && len(allM) > 0 {
		m := &MetricStats{Test: fmt.Sprintf("van Elteren stratified rank-sum test over the passing replicas, pipelines as strata, %d within-stratum permutations (seed %d), one-sided", StratifiedResamples, r.Seed),
			Baseline: Summarize(allB), Mutated: Summarize(allM)}
		if m.Baseline.Median != 0 {
			m.Reduction = 1 - m.Mutated.Median/m.Baseline.Median
		}
		m.Tails = VanElterenTails(mb, mm, StratifiedResamples, r.Seed)
		m.WorseP = m.Tails.Greater
		if r.Margin > 0 {
			shifted := make([][]float64, len(mm))
			for k, xs := range mm {
				for _, v := range xs {
					shifted[k] = append(shifted[k], v/(1+r.Margin))
				}
			}
			m.WorseP = VanElterenTails(mb, shifted, StratifiedResamples, r.Seed).Greater
		}
		m.Worse, m.Better = m.WorseP < half, m.Tails.Less < half
		if !math.IsNaN(m.Tails.Greater) {
			d.Metric = m
		}
	}
	d = r.verdict(d, n)
	d.Detectable = r.detectable(d)
	return d
}
