package replicate

import (
	"maps"
	"slices"
	"strconv"

	"github.com/replaytool/replay/stats"
)

// Noise is the run-to-run noise of each arm measured against itself: for each
// re-dispatched dispatch, the share of replicas whose outcome equals the arm's
// most common one (1 is fully deterministic). The baseline's scores are the noise
// floor; a dispatch whose mutated mode differs from the baseline's while both arms
// are steady is the mutation's effect, not noise.
type Noise struct {
	// Outcome is the determinism of the replicas' own outcomes (pass or fail).
	BaselineOutcome float64         `json:"baseline_outcome"`
	MutatedOutcome  float64         `json:"mutated_outcome"`
	Dispatches      []DispatchNoise `json:"dispatches"`
}

// DispatchNoise is the determinism of one original dispatch in both arms.
type DispatchNoise struct {
	ReplayOf int    `json:"replay_of"`
	Role     string `json:"role"`
	// Baseline and Mutated are the determinism scores; the modes are the most
	// common outcomes ("completed/PASS", "failed", ...).
	Baseline     float64 `json:"baseline"`
	Mutated      float64 `json:"mutated"`
	BaselineMode string  `json:"baseline_mode"`
	MutatedMode  string  `json:"mutated_mode"`
	// BaselineRuns and MutatedRuns count the replicas that ran the dispatch; a
	// dispatch no replica of an arm ran has no score there (shown as not run).
	BaselineRuns int `json:"baseline_runs"`
	MutatedRuns  int `json:"mutated_runs"`
	// P is Fisher's exact test (two-sided) of the share of each arm's runs that
	// end in the baseline's usual outcome; HolmP the same adjusted by Holm's
	// method over every dispatch of the report.
	P     float64 `json:"p"`
	HolmP float64 `json:"holm_p"`
	// Effect is set when HolmP is below the rule's alpha: the mutation changes
	// this dispatch's outcome, with the chance of any false flag in the report at
	// most alpha.
	Effect bool `json:"effect"`
}

// determinism returns the most common value of outcomes (the first seen of the
// most common ones) and the share of outcomes equal to it; 1 for none.
func determinism(outcomes []string) (string, float64) {
	if len(outcomes) == 0 {
		return "", 1
	}
	count := map[string]int{}
	mode := ""
	for _, o := range outcomes {
		count[o]++
		if mode == "" || count[o] > count[mode] {
			mode = o
		}
	}
	return mode, float64(count[mode]) / float64(len(outcomes))
}

func noiseOf(reps []*Replica, alpha float64) Noise {
	var n Noise
	var bo, mo []string
	per := map[int]map[string][]string{}
	roles := map[int]string{}
	var order []int
	for _, rep := range reps {
		o := strconv.FormatBool(rep.Passed)
		if rep.Arm == Baseline {
			bo = append(bo, o)
		} else {
			mo = append(mo, o)
		}
		for _, d := range rep.Dispatches {
			if per[d.ReplayOf] == nil {
				per[d.ReplayOf] = map[string][]string{}
				roles[d.ReplayOf] = d.Role
				order = append(order, d.ReplayOf)
			}
			per[d.ReplayOf][rep.Arm] = append(per[d.ReplayOf][rep.Arm], d.Outcome())
		}
	}
	_, n.BaselineOutcome = determinism(bo)
	_, n.MutatedOutcome = determinism(mo)
	slices.Sort(order)
	for _, seq := range order {
		d := DispatchNoise{ReplayOf: seq, Role: roles[seq]}
		d.BaselineMode, d.Baseline = determinism(per[seq][Baseline])
		d.MutatedMode, d.Mutated = determinism(per[seq][Mutated])
		d.BaselineRuns, d.MutatedRuns = len(per[seq][Baseline]), len(per[seq][Mutated])
		d.P = 1
		if d.BaselineRuns > 0 && d.MutatedRuns > 0 {
			same := func(outs []string) int {
				k := 0
				for _, o := range outs {
					if o == d.BaselineMode {
						k++
					}
				}
				return k
			}
			b, m := same(per[seq][Baseline]), same(per[seq][Mutated])
			d.P = stats.FisherExact(m, d.MutatedRuns-m, b, d.BaselineRuns-b)
		}
		n.Dispatches = append(n.Dispatches, d)
	}
	ps := make([]float64, len(n.Dispatches))
	for i, d := range n.Dispatches {
		ps[i] = d.P
	}
	for i, h := range stats.Holm(ps) {
		n.Dispatches[i].HolmP = h
		n.Dispatches[i].Effect = h < alpha
	}
	return n
}

// DispatchStats are one original dispatch's medians in each arm, over the
// replicas that re-ran it.
type DispatchStats struct {
	ReplayOf int    `json:"replay_of"`
	Role     string `json:"role"`
	// Runs counts the replicas of each arm that re-ran it.
	BaselineRuns     int     `json:"baseline_runs"`
	MutatedRuns      int     `json:"mutated_runs"`
	BaselineDuration float64 `json:"baseline_duration_s"`
	MutatedDuration  float64 `json:"mutated_duration_s"`
	BaselineInput    float64 `json:"baseline_input_chars"`
	MutatedInput     float64 `json:"mutated_input_chars"`
	BaselineOutput   float64 `json:"baseline_output_chars"`
	MutatedOutput    float64 `json:"mutated_output_chars"`
}

// perDispatch gives the per-dispatch medians of both arms, by original seq.
func perDispatch(reps []*Replica) []DispatchStats {
	type series struct{ dur, in, out []float64 }
	by := map[int]map[string]*series{}
	roles := map[int]string{}
	for _, rep := range reps {
		for _, d := range rep.Dispatches {
			if by[d.ReplayOf] == nil {
				by[d.ReplayOf] = map[string]*series{Baseline: {}, Mutated: {}}
				roles[d.ReplayOf] = d.Role
			}
			s := by[d.ReplayOf][rep.Arm]
			s.dur = append(s.dur, d.DurationS)
			s.in = append(s.in, float64(d.InputChars))
			s.out = append(s.out, float64(d.OutputChars))
		}
	}
	med := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return stats.Summarize(xs).Median
	}
	var out []DispatchStats
	for _, seq := range slices.Sorted(maps.Keys(by)) {
		b, m := by[seq][Baseline], by[seq][Mutated]
		out = append(out, DispatchStats{ReplayOf: seq, Role: roles[seq], BaselineRuns: len(b.dur), MutatedRuns: len(m.dur),
			BaselineDuration: med(b.dur), MutatedDuration: med(m.dur), BaselineInput: med(b.in), MutatedInput: med(m.in),
			BaselineOutput: med(b.out), MutatedOutput: med(m.out)})
	}
	return out
}
