// Package simplan reads the rows of `replay plan --json` into the crash
// simulator's decision the way both of its callers count them: the property test
// over generated seeds (cmd/replay/internal/cli) and the simulated corpus (e2e).
// Test-only, like the rest of internal/testkit.
package simplan

import "github.com/replaytool/replay/internal/testkit/pipesim"

// Row is a row of the plan's skip or redo table.
type Row struct {
	Seq int    `json:"seq"`
	Run string `json:"run"` // "skill": never started, the skill dispatches it
}

// Seqs returns the seqs of rows, in order (nil for none).
func Seqs(rows []Row) []int {
	var out []int
	for _, r := range rows {
		out = append(out, r.Seq)
	}
	return out
}

// CountSkillRuns adds to d.Executed the seq of each redo row the plan hands to
// the skill (run "skill": a dispatch file with no manifest line never started,
// and the skill dispatches it again) unless the preflight refuses the run
// (d.Refuses): the judge counts it as run by the resume.
func CountSkillRuns(d *pipesim.Decision, redo []Row) {
	if d.Refuses {
		return
	}
	for _, r := range redo {
		if r.Run == "skill" {
			d.Executed = append(d.Executed, r.Seq)
		}
	}
}
