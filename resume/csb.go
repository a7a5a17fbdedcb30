package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// maxMilestones bounds the manifest summaries quoted in the CSB's progress.
const maxMilestones = 8

// State is the orchestrator state reconstructed from disk (SPEC §4 step 7).
type State struct {
	CSB      *report.CSB
	Mode     string
	Baseline string
	Warnings []string
}

// Reconstruct builds the synthetic Compression State Block from, in priority order:
// the handoff manifest into the resume phase, pipeline-status.md's Compression
// State, the manifest, the dispatch files, the checkpoint and the build-mode file.
// head is the project commit the resume starts from (zero: the current HEAD); the
// files changed from the baseline to it are the block's Files Modified.
func Reconstruct(a *Analysis, tmp string, head plumbing.Hash) *State {
	pl := a.Pipeline
	st := &State{CSB: &report.CSB{Skill: pl.Profile.Skill, ScratchDir: pl.ScratchDir, Sources: map[string]string{}}}
	c := st.CSB
	if pl.Marker != nil && pl.Marker.Skill != "" {
		c.Skill = pl.Marker.Skill
	}
	c.Phase = phaseTitle(a)

	var h *pipeline.Handoff
	if path := pipeline.HandoffFor(pl.ScratchDir, a.Resume.Phase); path != "" && !st.stale(pl, path, "handoff manifest") {
		var err error
		if h, err = pipeline.ReadHandoff(path); err != nil {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%v; state taken from the other sources", err))
			h = nil
		}
	}
	var cs *pipeline.CompressionState
	statusPath := filepath.Join(pl.ScratchDir, "pipeline-status.md")
	if st.stale(pl, statusPath, "pipeline-status.md") {
		// another run's state: the other sources stand in
	} else if got, ok, err := pipeline.ReadCompressionState(statusPath); err == nil && ok {
		cs = got
	} else if err == nil {
		st.Warnings = append(st.Warnings, statusPath+" has no Compression State section; state taken from the handoff manifest and the manifest")
	}

	c.Goal, c.Sources["goal"] = pick(h, func(h *pipeline.Handoff) string { return h.Goal }, cs, func(cs *pipeline.CompressionState) string { return cs.Goal })
	c.Decisions, c.Sources["key_decisions"] = pickList(h, func(h *pipeline.Handoff) []string { return h.Decisions }, cs, func(cs *pipeline.CompressionState) []string { return cs.Decisions })
	c.Constraints, c.Sources["active_constraints"] = pickList(h, func(h *pipeline.Handoff) []string { return h.Constraints }, cs, func(cs *pipeline.CompressionState) []string { return cs.Constraints })
	c.Constraints = append(c.Constraints, fmt.Sprintf(verifiedPrefix+"%s", verifiedThrough(a)))

	st.readBuildMode(pl, tmp)
	c.Constraints = append(c.Constraints, fmt.Sprintf("Build mode: %s (baseline %s)", st.Mode, orUnknown(short(st.Baseline))))

	c.Progress = progress(a)
	c.FilesModified = filesModified(pl, st.Baseline, head)
	if len(c.FilesModified) > 0 {
		c.Sources["files_modified"] = "checkpoint diff against the baseline"
	}
	c.NextSteps = nextSteps(a, h, cs)
	c.Sources["next_steps"] = "manifest analysis"
	if cs != nil && len(cs.NextSteps) > 0 {
		c.Sources["next_steps"] = "manifest analysis, then pipeline-status.md Compression State"
	} else if h != nil && len(h.Inputs) > 0 {
		c.Sources["next_steps"] = "manifest analysis, then " + filepath.Base(h.Path)
	}
	return st
}

const verifiedPrefix = "Replay session -- prior work verified through "

// unverifiedHealth is the block's health when the user resumed on a disk state that
// no verification backed.
const unverifiedHealth = "YELLOW (unverified: verification failed back to the start and the user chose to resume on the current disk state; nothing was restored)"

// MarkUnverified rewrites the block for a resume on the current disk state after
// verification failed back to the start: the health is not GREEN and the block says
// that nothing was verified, instead of claiming the skipped work was.
func (st *State) MarkUnverified() {
	c := st.CSB
	c.Health = unverifiedHealth
	for i, line := range c.Constraints {
		if strings.HasPrefix(line, verifiedPrefix) {
			c.Constraints[i] = "Replay session -- NOTHING was verified: every boundary failed verification, and the work before the resume point is taken from the disk as it is; check it before relying on it"
		}
	}
}

// stale reports whether the state file at path was last written before the run
// started (pipeline.RunStart): another run's, ignored with a warning. A missing
// file, or a run nothing dates, is not stale.
func (st *State) stale(pl *pipeline.Pipeline, path, what string) bool {
	start := pl.RunStart()
	if start.IsZero() {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.ModTime().Before(start) {
		return false
	}
	st.Warnings = append(st.Warnings, fmt.Sprintf("%s %s was last written %s, before this run started: another run's, ignored", what, path, report.Time(fi.ModTime())))
	return true
}

func (st *State) readBuildMode(pl *pipeline.Pipeline, tmp string) {
	st.Mode = "feature"
	candidates := paths.BuildModeFiles(pl.SysTmp, tmp)
	var bm *pipeline.BuildMode
	for _, path := range candidates {
		if st.stale(pl, path, "build-mode file") {
			continue
		}
		got, err := pipeline.ReadBuildMode(path)
		if err == nil {
			bm = got
			break
		}
	}
	if bm == nil {
		st.Warnings = append(st.Warnings, fmt.Sprintf("build-mode file %s is missing or unreadable; assuming feature mode", strings.Join(candidates, " or ")))
	} else {
		st.Mode, st.Baseline = bm.Mode, bm.Baseline
	}
	if st.Baseline == "" && pl.Marker != nil {
		st.Baseline = pl.Marker.BaselineSHA
	}
}

func pick(h *pipeline.Handoff, fh func(*pipeline.Handoff) string, cs *pipeline.CompressionState, fc func(*pipeline.CompressionState) string) (string, string) {
	if h != nil && fh(h) != "" {
		return fh(h), filepath.Base(h.Path)
	}
	if cs != nil && fc(cs) != "" {
		return fc(cs), "pipeline-status.md Compression State"
	}
	return "", "none"
}

func pickList(h *pipeline.Handoff, fh func(*pipeline.Handoff) []string, cs *pipeline.CompressionState, fc func(*pipeline.CompressionState) []string) ([]string, string) {
	if h != nil && len(fh(h)) > 0 {
		return append([]string{}, fh(h)...), filepath.Base(h.Path)
	}
	if cs != nil && len(fc(cs)) > 0 {
		return append([]string{}, fc(cs)...), "pipeline-status.md Compression State"
	}
	return nil, "none"
}

func phaseTitle(a *Analysis) string {
	b := a.Resume
	s := b.Phase
	if name := a.Profile.PhaseName(b.Phase); name != "" {
		s += " (" + name + ")"
	}
	if b.Wave > 0 {
		s += fmt.Sprintf(", wave %d", b.Wave)
	}
	return s
}

func verifiedThrough(a *Analysis) string {
	if len(a.Skip) == 0 {
		return "nothing (starting fresh)"
	}
	last := a.Skip[len(a.Skip)-1]
	return fmt.Sprintf("seq %d (%s)", last.Seq, strings.TrimSpace(phaseLabel(a.Resume)+" boundary"))
}

func progress(a *Analysis) []string {
	var out []string
	if i := a.Profile.PhaseIndex(a.Resume.Phase); i > 0 {
		out = append(out, fmt.Sprintf("Phases %s through %s completed in prior session", a.Profile.Phases[0].ID, a.Profile.Phases[i-1].ID))
	}
	if a.Checkpoint != nil {
		out = append(out, fmt.Sprintf("Resuming from %s (checkpoint %s) via replay", a.Checkpoint.Reason, a.Checkpoint.Short))
	} else {
		out = append(out, "Resuming from "+a.Resume.Label()+" via replay, without a checkpoint")
	}
	var milestones []string
	for _, d := range a.Skip {
		if d.Done() && d.Summary != "" {
			milestones = append(milestones, fmt.Sprintf("seq %d %s: %s", d.Seq, d.Role, report.Clip(d.Summary, 90)))
		}
	}
	if len(milestones) > maxMilestones {
		milestones = milestones[len(milestones)-maxMilestones:]
	}
	return append(out, milestones...)
}

func nextSteps(a *Analysis, h *pipeline.Handoff, cs *pipeline.CompressionState) []string {
	var out []string
	if len(a.Redo) > 0 {
		var names []string
		for _, d := range a.Redo {
			names = append(names, strings.TrimSpace(fmt.Sprintf("seq %d %s %s", d.Seq, d.Role, d.TaskLabel())))
		}
		out = append(out, fmt.Sprintf("Re-dispatch from %s: %s", phaseLabel(a.Resume), strings.Join(names, ", ")))
	}
	switch {
	case cs != nil && len(cs.NextSteps) > 0:
		out = append(out, cs.NextSteps...)
	case h != nil && len(h.Inputs) > 0:
		for _, in := range h.Inputs {
			out = append(out, "Use input: "+in)
		}
	}
	if len(out) == 0 {
		out = append(out, "Continue "+phaseLabel(a.Resume)+" with the pipeline's own phase logic")
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
