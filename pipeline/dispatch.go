package pipeline

import (
	"fmt"
	"sort"
	"time"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

// Dispatch is one subagent call as the engine sees it: its authoritative manifest
// state joined with its dispatch file.
type Dispatch struct {
	Seq       int
	File      string
	Template  string
	Role      string
	Phase     string
	Task      *int
	Status    manifest.Status
	History   []manifest.Status
	Time      time.Time // header timestamp; zero when unknown
	DurationS *float64
	Summary   string
	// Recorded is false for a dispatch file on disk with no manifest line.
	Recorded bool
	// Inferred is set when a dispatch with no completion line is taken as completed
	// because the pipeline moved past it and its artifacts verify.
	Inferred bool
	Class    templates.RoleClass
	// Wave is the wave of a dispatch in a phase split into waves (1-based), 0 otherwise.
	Wave int
	// ReplayOf is the seq this dispatch re-executed, 0 for an original dispatch.
	ReplayOf int
	// ReplaySession is the replay run that wrote this dispatch, "" for an original one.
	ReplaySession string
	// Placed is the time that places the dispatch among the boundaries when it
	// differs from Time: a replay's is its original's (a replay re-executes that
	// work after a restore, long after the checkpoints of the original run, and
	// belongs where the original does). Zero: Time places it (PlaceTime).
	Placed time.Time
	// Entry is the authoritative manifest entry; nil for an unrecorded dispatch file.
	Entry *manifest.Entry
	// Pipeline is the skill its dispatch file header names (**Pipeline:**), "" when
	// there is no file or no such field.
	Pipeline string
}

// PlaceTime returns the time that places d among the boundaries: Placed when set,
// else its header time.
func (d *Dispatch) PlaceTime() time.Time {
	if !d.Placed.IsZero() {
		return d.Placed
	}
	return d.Time
}

// TaskLabel renders the task as "t2", or "" when the dispatch has none.
func (d *Dispatch) TaskLabel() string {
	if d.Task == nil {
		return ""
	}
	return fmt.Sprintf("t%d", *d.Task)
}

// End returns the end of the dispatch's time window: header time plus duration.
// ok is false when either is unknown.
func (d *Dispatch) End() (time.Time, bool) {
	if d.Time.IsZero() || d.DurationS == nil {
		return time.Time{}, false
	}
	return d.Time.Add(time.Duration(*d.DurationS * float64(time.Second))), true
}

// Done reports whether the dispatch ended completed, skipped or replayed (re-executed
// by a replay, whose own entries say how that went), or was inferred so.
func (d *Dispatch) Done() bool {
	return d.Status == manifest.StatusCompleted || d.Status == manifest.StatusSkipped || d.Status == manifest.StatusReplayed || d.Inferred
}

// Failed reports whether the dispatch ended failed or error.
func (d *Dispatch) Failed() bool {
	return d.Status == manifest.StatusFailed || d.Status == manifest.StatusError
}

// SameWork reports whether a and b are attempts at the same work: same role, phase
// and task.
func SameWork(a, b *Dispatch) bool {
	if a.Role != b.Role || a.Phase != b.Phase {
		return false
	}
	if (a.Task == nil) != (b.Task == nil) {
		return false
	}
	return a.Task == nil || *a.Task == *b.Task
}

// SortDispatches orders dispatches by seq.
func SortDispatches(ds []*Dispatch) {
	sort.Slice(ds, func(i, j int) bool { return ds[i].Seq < ds[j].Seq })
}
