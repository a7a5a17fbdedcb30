package resume

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// DecideFor analyses a loaded pipeline (SPEC §4 steps 2–4), read-only, with
// dispatches that must be re-executed (an A/B replay's; nil: none).
func DecideFor(pl *pipeline.Pipeline, fromPhase string, fromSeq int, now time.Time, mustRedo func(*pipeline.Dispatch) bool) (*Analysis, error) {
	a, err := Analyze(Input{
		MustRedo:    mustRedo,
		Profile:     pl.Profile,
		Dispatches:  pl.Dispatches,
		Checkpoints: pl.Checkpoints,
		Foreign:     pl.ForeignCheckpoints,
		Log:         pl.CommitLog(),
		Evidence:    pl.Evidence,
		Describe:    pl.Describe,
		HasContext:  pl.HasContext,
		Asks:        pl.Asks,
		Others:      pl.OtherSessions(),
		FromPhase:   fromPhase,
		FromSeq:     fromSeq,
		Now:         now,
		NoShadow:    pl.Store == nil,
	})
	if err != nil {
		return nil, err
	}
	a.Pipeline = pl
	return a, nil
}

// WorkItems returns the dispatches to re-execute, one per work item (a.Items):
// replays and retries of a dispatch collapse onto its first attempt. The plan lists
// exactly these and a resume re-dispatches exactly these.
//
// An Analysis built by hand with Redo only (a fork's continuation) has its items
// grouped here from Redo.
func WorkItems(a *Analysis) []*pipeline.Dispatch {
	if a.Items == nil && len(a.Redo) > 0 {
		a.groupItems()
	}
	out := make([]*pipeline.Dispatch, 0, len(a.Items))
	for _, it := range a.Items {
		out = append(out, it.Dispatch)
	}
	return out
}

// Warnings returns the load and analysis warnings, in that order.
func Warnings(a *Analysis) []string {
	pl := a.Pipeline
	return append(append([]string{}, pl.Warnings...), a.Warnings...)
}

// BuildPlan turns the decision into the "Replay Plan (dry-run)" document.
func BuildPlan(a *Analysis, mutations []string) *report.Plan {
	pl := a.Pipeline
	p := &report.Plan{
		Source:        pl.Location.ManifestPath,
		Project:       pl.ProjectDir,
		Skill:         pl.Profile.Skill,
		Profile:       ProfileName(pl.Profile),
		ProfileReason: pl.ProfileReason,
		Session:       pl.Location.SessionID,
		CrashedAt:     crashedAt(a),
		ResumePoint:   resumePoint(a),
		WorkPreserved: workPreserved(a),
		NextSeq:       pl.NextSeq,
		Mutations:     append([]string{}, mutations...),
		Warnings:      Warnings(a),
		Skip:          []report.SkipRow{},
		Redo:          []report.RedoRow{},
		Partial:       []string{},

		FailedVerifications: FailureLines(a),
		Preflight:           []string{},
	}
	if pl.Marker != nil {
		if pl.Marker.Skill != "" {
			p.Skill = pl.Marker.Skill
		}
		p.Started = pl.Marker.StartTime
		if p.Session == "" {
			p.Session = pl.Marker.PipelineID
		}
	}
	if a.Checkpoint != nil {
		p.Checkpoint = a.Checkpoint.Hash
	}
	for _, d := range a.Skip {
		p.Skip = append(p.Skip, report.SkipRow{Seq: d.Seq, Role: d.Role, Phase: phaseCell(d), Task: d.TaskLabel(), Summary: skipSummary(a, d)})
	}
	for _, it := range a.Items {
		d := it.Dispatch
		run := "live"
		if it.NotStarted() {
			run = "skill" // never started: the skill dispatches it again
		}
		p.Redo = append(p.Redo, report.RedoRow{Seq: d.Seq, Role: d.Role, Phase: phaseCell(d), Task: d.TaskLabel(), OriginalStatus: itemStatus(it), Template: d.Template, Run: run})
	}
	for _, pc := range a.Partial {
		p.Partial = append(p.Partial, strings.TrimSpace(fmt.Sprintf("%s %q — seq %d %s %s", short(pc.Commit.Hash), pc.Commit.Subject(), pc.Dispatch.Seq, pc.Dispatch.Role, pc.Dispatch.TaskLabel())))
	}
	return p
}

// ProfileName names a profile for the plan: its skill, or "generic" for a profile
// derived from the run.
func ProfileName(p *templates.Profile) string {
	if p.Generic {
		return "generic"
	}
	return p.Skill
}

func phaseCell(d *pipeline.Dispatch) string {
	if d.Wave > 0 {
		return fmt.Sprintf("%s (wave %d)", d.Phase, d.Wave)
	}
	return d.Phase
}

func skipSummary(a *Analysis, d *pipeline.Dispatch) string {
	s := d.Summary
	if d.Failed() {
		if by := a.supersededBy(d); by != nil {
			s = fmt.Sprintf("%s; superseded by seq %d", d.Status, by.Seq)
		}
	}
	if d.Inferred {
		s = "no completion line; artifacts verify"
	}
	return s
}

// itemStatus is the original status of a work item: its one attempt's, or each
// attempt's with its seq.
func itemStatus(it WorkItem) string {
	if len(it.Attempts) == 1 && it.Attempts[0] == it.Dispatch {
		return originalStatus(it.Dispatch)
	}
	parts := make([]string, 0, len(it.Attempts))
	for _, d := range it.Attempts {
		parts = append(parts, fmt.Sprintf("seq %d: %s", d.Seq, originalStatus(d)))
	}
	return strings.Join(parts, "; ")
}

func originalStatus(d *pipeline.Dispatch) string {
	if !d.Recorded {
		return "unrecorded"
	}
	if len(d.History) > 1 {
		parts := make([]string, len(d.History))
		for i, s := range d.History {
			parts[i] = string(s)
		}
		return strings.Join(parts, " → ")
	}
	return string(d.Status)
}

func crashedAt(a *Analysis) string {
	c := a.Crash
	if c.Boundary == nil {
		return "nothing incomplete: every dispatch ended completed or superseded"
	}
	var parts []string
	for _, d := range c.InFlight {
		parts = append(parts, fmt.Sprintf("seq %d %s %s in flight", d.Seq, d.Role, d.TaskLabel()))
	}
	for _, d := range c.Failed {
		parts = append(parts, fmt.Sprintf("seq %d %s %s ended %s", d.Seq, d.Role, d.TaskLabel(), d.Status))
	}
	for _, d := range c.Unrecorded {
		parts = append(parts, fmt.Sprintf("%s on disk with no manifest line", d.File))
	}
	for _, d := range c.Unverified {
		parts = append(parts, fmt.Sprintf("seq %d %s %s %s but failed verification", d.Seq, d.Role, d.TaskLabel(), d.Status))
	}
	for i := range parts {
		parts[i] = strings.Join(strings.Fields(parts[i]), " ")
	}
	return fmt.Sprintf("%s, %s", crashPlace(a), strings.Join(parts, "; "))
}

// crashPlace names the phase (and wave) of the latest incomplete work.
func crashPlace(a *Analysis) string {
	phase, wave := "", 0
	for _, list := range [][]*pipeline.Dispatch{a.Crash.InFlight, a.Crash.Failed, a.Crash.Unrecorded, a.Crash.Unverified} {
		for _, d := range list {
			if a.Profile.PhaseIndex(d.Phase) > a.Profile.PhaseIndex(phase) || (d.Phase == phase && d.Wave > wave) {
				phase, wave = d.Phase, d.Wave
			}
		}
	}
	s := "Phase " + phase
	if name := a.Profile.PhaseName(phase); name != "" {
		s += " (" + name + ")"
	}
	if wave > 0 {
		s += fmt.Sprintf(" wave %d", wave)
	}
	return s
}

func resumePoint(a *Analysis) string {
	b := a.Resume
	if b.End {
		return "end of the recorded work (every dispatch completed and verified: nothing to restore or re-execute)"
	}
	if b.Start {
		return "start of the pipeline (start fresh: no boundary before which all work is complete and verified)"
	}
	s := fmt.Sprintf("Phase %s boundary", b.Phase)
	if b.Wave > 0 {
		s += fmt.Sprintf(", wave %d", b.Wave)
	}
	if a.Checkpoint != nil {
		s += fmt.Sprintf(" (%s, checkpoint %s taken %s)", a.Checkpoint.Reason, a.Checkpoint.Short, report.Time(a.Checkpoint.Time))
	} else {
		s += fmt.Sprintf(" (%s: no checkpoint)", strings.Join(b.Reasons, " or "))
	}
	return s
}

func workPreserved(a *Analysis) string {
	if len(a.Skip) == 0 {
		return "none"
	}
	if a.Resume.End {
		return fmt.Sprintf("%s of dispatch time, %d dispatches (all of them)", report.Duration(a.Preserved), len(a.Skip))
	}
	phases := map[string]bool{}
	for _, d := range a.Skip {
		phases[d.Phase] = true
	}
	var done []string
	for ph := range phases {
		if a.Profile.PhaseIndex(ph) < a.Profile.PhaseIndex(a.Resume.Phase) {
			done = append(done, ph)
		}
	}
	sort.Slice(done, func(i, j int) bool { return a.Profile.PhaseIndex(done[i]) < a.Profile.PhaseIndex(done[j]) })
	scope := ""
	switch len(done) {
	case 0:
	case 1:
		scope = "phase " + done[0]
	default:
		scope = fmt.Sprintf("phases %s through %s", done[0], done[len(done)-1])
	}
	if a.Resume.Mid {
		extra := fmt.Sprintf("phase %s before %s", a.Resume.Phase, a.Resume.Reasons[0])
		switch {
		case a.Resume.Wave == 2:
			extra = fmt.Sprintf("phase %s wave 1", a.Resume.Phase)
		case a.Resume.Wave > 2:
			extra = fmt.Sprintf("phase %s waves 1–%d", a.Resume.Phase, a.Resume.Wave-1)
		}
		if scope == "" {
			scope = extra
		} else {
			scope += ", " + extra
		}
	}
	if scope == "" {
		// Nothing before the resume point: the dispatches kept are after it,
		// on a tree nothing restores (their artifacts verify on disk).
		scope = "kept on disk after the resume point"
	}
	return fmt.Sprintf("%s of dispatch time, %d dispatches (%s)", report.Duration(a.Preserved), len(a.Skip), scope)
}

// ExplainRows converts the checks of an analysis for the report.
func ExplainRows(a *Analysis) []report.ExplainRow {
	rows := make([]report.ExplainRow, 0, len(a.Checks))
	for _, c := range a.Checks {
		verdict := "FAIL"
		if c.OK {
			verdict = "ok"
		}
		rows = append(rows, report.ExplainRow{Boundary: c.Boundary, Seq: c.Seq, Role: c.Role, Check: c.Check, Verdict: verdict, Detail: c.Detail})
	}
	return rows
}

// FailureLines names each failed verification that moved the resume point back, one
// line each: seq, role, check and why.
func FailureLines(a *Analysis) []string {
	out := []string{}
	for _, f := range a.Failures {
		if f.Boundary == "" {
			// a check that moves no boundary: it says why an item is redone
			out = append(out, fmt.Sprintf("seq %d %s: %s failed: %s", f.Seq, f.Role, f.Check, f.Detail))
			continue
		}
		out = append(out, fmt.Sprintf("seq %d %s: %s failed: %s (so the resume cannot start at %s)", f.Seq, f.Role, f.Check, f.Detail, f.Boundary))
	}
	return out
}
