package resume

import (
	"fmt"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// Snapshot is a run as it was at the moment one of its dispatches (At) was sent:
// the dispatches that had completed by then, the ones in flight, the boundary and
// the checkpoint in effect, the project files changed since that checkpoint and
// the Compression State Block reconstructed as of that moment.
type Snapshot struct {
	At   int       `json:"at"`
	Time time.Time `json:"time"`
	// Phases is the phase map: every dispatch up to At with its status then.
	Phases []SnapshotPhase `json:"phases"`
	// Boundary is the last boundary with everything before it complete at At.
	Boundary string `json:"boundary"`
	// Checkpoint is the shadow checkpoint in effect at At; nil when none had been taken.
	Checkpoint *pipeline.CheckpointRef `json:"checkpoint,omitempty"`
	// Head is the project commit in effect at At ("" when unknown).
	Head string `json:"head,omitempty"`
	// Commits are the project commits made after the checkpoint and up to At, newest first.
	Commits []string `json:"commits"`
	// FilesChanged are the project files those commits changed.
	FilesChanged []string    `json:"files_changed"`
	CSB          *report.CSB `json:"csb"`
	Warnings     []string    `json:"warnings"`
}

// SnapshotPhase is one phase of the phase map at a seq.
type SnapshotPhase struct {
	Phase      string             `json:"phase"`
	Name       string             `json:"name,omitempty"`
	Dispatches []SnapshotDispatch `json:"dispatches"`
}

// SnapshotDispatch is one dispatch and its status at the snapshot's moment.
type SnapshotDispatch struct {
	Seq    int             `json:"seq"`
	Role   string          `json:"role"`
	Task   string          `json:"task,omitempty"`
	Wave   int             `json:"wave,omitempty"`
	Status manifest.Status `json:"status"`
}

// SeqRange returns the seqs of a run's original dispatches, first and last; ok is
// false when the run has none.
func SeqRange(pl *pipeline.Pipeline) (first, last int, ok bool) {
	for _, d := range pl.Dispatches {
		if d.ReplaySession != "" {
			continue
		}
		if !ok || d.Seq < first {
			first = d.Seq
		}
		if !ok || d.Seq > last {
			last = d.Seq
		}
		ok = true
	}
	return first, last, ok
}

// CheckSeq returns an ErrBadSeq error naming the valid range when seq is not a seq
// of the run (below 1 or past its last seq); what names the flag in the message.
func CheckSeq(pl *pipeline.Pipeline, what string, seq int) error {
	_, last, ok := SeqRange(pl)
	if !ok {
		return errkind.Errorf(ErrBadSeq, "%s %d: the run at %s has no dispatches", what, seq, pl.Manifest.Path)
	}
	if seq < 1 || seq > last {
		return errkind.Errorf(ErrBadSeq, "%s %d is outside the run: give a seq from 1 to %d (%s)", what, seq, last, pl.Manifest.Path)
	}
	return nil
}

// StateAt reconstructs the run as of the moment dispatch at was sent. tmp is the
// temporary root the build-mode file is looked for in. It reads only.
func StateAt(pl *pipeline.Pipeline, at int, tmp string) (*Snapshot, error) {
	if err := CheckSeq(pl, "--at", at); err != nil {
		return nil, err
	}
	when := seqTime(pl, at)
	ds := dispatchesAt(pl, at, when)
	var cps []pipeline.CheckpointRef
	for _, cp := range pl.Checkpoints {
		if !cp.Time.After(when) {
			cps = append(cps, cp)
		}
	}
	var log pipeline.CommitLog
	if l := pl.CommitLog(); l != nil {
		log = clippedLog{l, when}
	}
	a, err := Analyze(Input{Profile: pl.Profile, Dispatches: ds, Checkpoints: cps, Log: log,
		Evidence: pl.Evidence, Describe: pl.Describe, HasContext: pl.HasContext, Asks: pl.Asks, Now: when})
	if err != nil {
		return nil, fmt.Errorf("state at seq %d: %w", at, err)
	}
	a.Pipeline = pl
	s := &Snapshot{At: at, Time: when, Boundary: a.Detected.Label(), Checkpoint: a.Checkpoint, Phases: phaseMap(a, ds)}
	s.Warnings = append(s.Warnings, a.Warnings...)
	head := s.projectHistory(pl, log)
	st := Reconstruct(a, tmp, head)
	s.CSB = st.CSB
	s.Warnings = append(s.Warnings, st.Warnings...)
	return s, nil
}

// seqTime is when dispatch seq was sent: its header time, else the latest known
// time of an earlier dispatch.
func seqTime(pl *pipeline.Pipeline, seq int) time.Time {
	var best time.Time
	for _, d := range pl.Dispatches {
		if d.ReplaySession != "" || d.Time.IsZero() || d.Seq > seq {
			continue
		}
		if d.Seq == seq {
			return d.Time
		}
		if d.Time.After(best) {
			best = d.Time
		}
	}
	return best
}

// dispatchesAt copies the run's original dispatches up to at with their status at
// when: a dispatch that had not ended by then, and at itself, are in flight.
func dispatchesAt(pl *pipeline.Pipeline, at int, when time.Time) []*pipeline.Dispatch {
	var out []*pipeline.Dispatch
	for _, d := range pl.Dispatches {
		if d.ReplaySession != "" || d.Seq > at {
			continue
		}
		c := *d
		end, ok := d.End()
		if d.Seq == at || (d.Status.Final() && ok && end.After(when)) {
			c.Status = manifest.StatusDispatched
			c.History = []manifest.Status{manifest.StatusDispatched}
			c.Inferred = false
		}
		out = append(out, &c)
	}
	return out
}

func phaseMap(a *Analysis, ds []*pipeline.Dispatch) []SnapshotPhase {
	var out []SnapshotPhase
	idx := map[string]int{}
	for _, d := range ds {
		i, ok := idx[d.Phase]
		if !ok {
			i = len(out)
			idx[d.Phase] = i
			out = append(out, SnapshotPhase{Phase: d.Phase, Name: a.Profile.PhaseName(d.Phase)})
		}
		out[i].Dispatches = append(out[i].Dispatches, SnapshotDispatch{Seq: d.Seq, Role: d.Role, Task: d.TaskLabel(), Wave: d.Wave, Status: d.Status})
	}
	return out
}

// projectHistory fills the commits after the checkpoint up to the snapshot's time
// and the files they changed; it returns the project commit in effect then.
func (s *Snapshot) projectHistory(pl *pipeline.Pipeline, log pipeline.CommitLog) plumbing.Hash {
	if log == nil || pl.Project == nil {
		s.Warnings = append(s.Warnings, "the project is not a git repository: no files changed since the checkpoint")
		return plumbing.ZeroHash
	}
	all, err := log.Between(time.Time{}, s.Time)
	if err != nil || len(all) == 0 {
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("project history: %v", err))
		}
		return plumbing.ZeroHash
	}
	head := plumbing.NewHash(all[0].Hash)
	s.Head = all[0].Hash
	var since time.Time
	if s.Checkpoint != nil {
		since = s.Checkpoint.Time
	}
	var after []pipeline.Commit
	for _, c := range all {
		if c.Time.After(since) {
			after = append(after, c)
			s.Commits = append(s.Commits, c.Hash)
		}
	}
	if len(after) == 0 {
		return head
	}
	tip, err := pl.Project.CommitObject(head)
	if err != nil {
		return head
	}
	oldest, err := pl.Project.CommitObject(plumbing.NewHash(after[len(after)-1].Hash))
	if err != nil {
		return head
	}
	if oldest.NumParents() == 0 {
		return head
	}
	if base, err := oldest.Parent(0); err == nil {
		s.FilesChanged = changedPaths(base, tip)
		sort.Strings(s.FilesChanged)
	}
	return head
}

// clippedLog is a commit log that ends at a moment: what the history was then.
type clippedLog struct {
	log pipeline.CommitLog
	end time.Time
}

// Between returns the commits in [start, min(end, the log's end)], newest first.
func (c clippedLog) Between(start, end time.Time) ([]pipeline.Commit, error) {
	if end.After(c.end) {
		end = c.end
	}
	if end.Before(start) {
		return nil, nil
	}
	return c.log.Between(start, end)
}
