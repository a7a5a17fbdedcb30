package replicate

import (
	"slices"
	"strconv"
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
	// Effect is set when the modes differ: the mutation changes this dispatch's
	// usual outcome.
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

func noiseOf(reps []*Replica) Noise {
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
		d.Effect = d.BaselineMode != d.MutatedMode
		n.Dispatches = append(n.Dispatches, d)
	}
	return n
}
