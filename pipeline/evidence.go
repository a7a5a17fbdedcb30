package pipeline

import (
	"strings"
	"time"

	"github.com/replaytool/replay/manifest"
)

// Commit is one project commit as verification sees it.
type Commit struct {
	Hash    string
	Time    time.Time
	Message string
}

// Subject returns the first line of the commit message.
func (c Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return s
}

// CommitLog answers which project commits fall in a time window.
type CommitLog interface {
	// Between returns the commits whose committer time lies in [start, end], newest first.
	Between(start, end time.Time) ([]Commit, error)
}

// Evidence is what a dispatch left in its dispatch directory.
type Evidence struct {
	// Outputs maps a seq to the output files beside its dispatch file.
	Outputs map[int][]string
	// Receipts maps a seq to the dispatch ids of its receipt-ledger lines.
	Receipts map[int][]string
	// Cut maps a seq with no readable dispatch file to what is left of its
	// header, cut by a crash before the "---" line (manifest.ParseCutDispatchHeader):
	// a dispatch of that template was being written, of a phase and task its
	// fields do not rule out. Evidence only: it never becomes a dispatch.
	Cut map[int]*manifest.CutDispatchHeader
}

// CheckpointRef is what the engine needs to know of one shadow checkpoint.
type CheckpointRef struct {
	Hash   string
	Short  string
	Reason string
	Source string
	Time   time.Time
}

// describeLimit bounds how much of a dispatch file Describe reads.
const describeLimit = 64 << 10

// Describe returns the task description of dispatch d: the context the orchestrator
// injected into its dispatch file (the text after the last "## Context" heading, else
// the whole body), and the text of its task in the project's plan. "" when neither
// is there.
func (pl *Pipeline) Describe(d *Dispatch) string {
	plan := ""
	if d.Task != nil {
		if pl.plan == nil {
			pl.plan = planTasks(pl.ProjectDir)
		}
		plan = pl.plan[*d.Task]
	}
	return pl.dispatchContext(d) + "\n" + plan
}

// dispatchContext returns the context part of d's dispatch file; "" when the file
// is gone or unreadable.
func (pl *Pipeline) dispatchContext(d *Dispatch) string {
	path, ok := pl.Files[d.Seq]
	if !ok {
		return ""
	}
	return contextOf(path)
}

// ReplayModeKey is the manifest key that marks the entries of an A/B replay: they
// ran in an isolated worktree, so they never count as work done for the pipeline.
const ReplayModeKey = "replay_mode"

// ReplayModeAB is the value of ReplayModeKey on A/B replay entries.
const ReplayModeAB = `"ab"`

// IsABEntry reports whether e was written by an A/B replay.
func IsABEntry(e *manifest.Entry) bool {
	return string(e.Extra[ReplayModeKey]) == ReplayModeAB
}
