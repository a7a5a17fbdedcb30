package replicate

import "encoding/json"

// A dispatch no replica of an arm ran has no numbers in that arm: the JSON
// writes them as null (the run count, 0, says why), never as a determinism of 1
// or a median of 0 that would read as a measurement. Reading them back gives
// the zero values, which the reports print as "did not run" by the run count.

// orNull is x, or null when runs is 0.
func orNull(runs int, x float64) *float64 {
	if runs == 0 {
		return nil
	}
	return &x
}

// MarshalJSON writes the scores and modes of an arm that did not run the
// dispatch as null.
func (d DispatchNoise) MarshalJSON() ([]byte, error) {
	type plain DispatchNoise
	mode := func(runs int, m string) *string {
		if runs == 0 {
			return nil
		}
		return &m
	}
	return json.Marshal(struct {
		plain
		Baseline     *float64 `json:"baseline"`
		Mutated      *float64 `json:"mutated"`
		BaselineMode *string  `json:"baseline_mode"`
		MutatedMode  *string  `json:"mutated_mode"`
	}{plain(d), orNull(d.BaselineRuns, d.Baseline), orNull(d.MutatedRuns, d.Mutated),
		mode(d.BaselineRuns, d.BaselineMode), mode(d.MutatedRuns, d.MutatedMode)})
}

// MarshalJSON writes the medians of an arm that did not run the dispatch as null.
func (d DispatchStats) MarshalJSON() ([]byte, error) {
	type plain DispatchStats
	return json.Marshal(struct {
		plain
		BaselineDuration *float64 `json:"baseline_duration_s"`
		MutatedDuration  *float64 `json:"mutated_duration_s"`
		BaselineInput    *float64 `json:"baseline_input_chars"`
		MutatedInput     *float64 `json:"mutated_input_chars"`
		BaselineOutput   *float64 `json:"baseline_output_chars"`
		MutatedOutput    *float64 `json:"mutated_output_chars"`
	}{plain(d), orNull(d.BaselineRuns, d.BaselineDuration), orNull(d.MutatedRuns, d.MutatedDuration),
		orNull(d.BaselineRuns, d.BaselineInput), orNull(d.MutatedRuns, d.MutatedInput),
		orNull(d.BaselineRuns, d.BaselineOutput), orNull(d.MutatedRuns, d.MutatedOutput)})
}
