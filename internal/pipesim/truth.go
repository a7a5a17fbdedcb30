package pipesim

import (
	"sort"
	"time"
)

// Item is one unit of the pipeline's work: a dispatch, its retries and its
// replays share it and are re-dispatched once.
type Item struct {
	Role  string `json:"role"`
	Phase string `json:"phase"`
	Task  int    `json:"task,omitempty"`
}

// Boundary is one place a resume can restart from, in the run's order: the run's
// start (no checkpoint), each checkpoint the orchestrator took or was about to
// take, and the end (all work done, nothing to restore).
type Boundary struct {
	Name   string    `json:"name"` // "start", a checkpoint reason, or "end"
	Hash   string    `json:"hash,omitempty"`
	Time   time.Time `json:"time"`
	Exists bool      `json:"exists"` // the checkpoint is in the shadow repository
}

// Ambiguity is a situation the generator made on purpose in which what is on
// disk cannot prove work that was in fact done: a resume may fall back to one of
// Positions, and must name the failed check on Seq when it does.
type Ambiguity struct {
	Check     string `json:"check"`
	Seq       int    `json:"seq"`
	Why       string `json:"why"`
	Positions []int  `json:"positions"`
}

// Truth is what is true of a generated run, by construction.
type Truth struct {
	Seed    int64  `json:"seed"`
	Skill   string `json:"skill"`
	Session string `json:"session"`
	Branch  string `json:"branch"`
	// Project is the project's working tree; Home and Tmp are $HOME and $TMPDIR.
	Project string `json:"project"`
	Home    string `json:"home"`
	Tmp     string `json:"tmp"`
	// Now is a time after the crash, for --now.
	Now time.Time `json:"now"`
	// Boundaries are this run's restart places in order; Position indexes the
	// latest one everything before which is provably on disk.
	Boundaries []Boundary `json:"boundaries"`
	Position   int        `json:"position"`
	// Skip are the seqs before the boundary, Redo the work items at or after it.
	Skip []int  `json:"skip"`
	Redo []Item `json:"redo"`
	// OnDisk are the seqs whose work is on disk (or needed none).
	OnDisk  []int `json:"on_disk"`
	NextSeq int   `json:"next_seq"`
	// Items maps every seq this run used for a dispatch to its work item.
	Items       map[int]Item `json:"items"`
	Ambiguities []Ambiguity  `json:"ambiguities"`
	// Foreign holds the checkpoints of other, older runs in the same shadow
	// repository: hash to time.
	Foreign map[string]time.Time `json:"foreign"`
	// Shapes names what this seed's run has (parallel waves, retries, ...).
	Shapes []string `json:"shapes"`
}

// PositionOf returns the index in Boundaries of the checkpoint with hash h, or -1.
func (t *Truth) PositionOf(h string) int {
	for i, b := range t.Boundaries {
		if b.Hash != "" && b.Hash == h {
			return i
		}
	}
	return -1
}

// End is the index of the "end" boundary.
func (t *Truth) End() int { return len(t.Boundaries) - 1 }

func itemOf(a *attempt) Item { return Item{Role: a.Role.Name, Phase: a.Phase, Task: a.Role.Task} }

// computeTruth derives the truth from what the crash left of the simulated run.
func (u *run) computeTruth(t *Truth) {
	t.Boundaries = append(t.Boundaries, Boundary{Name: "start", Time: u.start, Exists: true})
	for _, s := range u.slots {
		t.Boundaries = append(t.Boundaries, Boundary{Name: s.Reason, Hash: s.Hash, Time: s.At, Exists: s.done && !s.Skipped})
	}
	t.Boundaries = append(t.Boundaries, Boundary{Name: "end", Exists: true})

	// The attempts the crash left a trace of, grouped by seq; the last one on a
	// seq decides its state.
	last := map[int]*attempt{}
	first := map[int]*attempt{}
	var seqs []int
	for _, a := range u.attempts {
		if !a.fileDone && !a.beforeDone {
			continue
		}
		if _, ok := first[a.Seq]; !ok {
			first[a.Seq] = a
			seqs = append(seqs, a.Seq)
		}
		last[a.Seq] = a
	}
	sort.Ints(seqs)
	t.Items = map[int]Item{}
	laterOf := map[Item]time.Time{}
	for _, s := range seqs {
		it := itemOf(last[s])
		t.Items[s] = it
		if last[s].Start.After(laterOf[it]) {
			laterOf[it] = last[s].Start
		}
	}
	fine := func(s int) bool {
		a := last[s]
		// a seq whose last attempt has no complete dispatched line, or a dispatched
		// line and no completion line, is in flight.
		lastLine := a
		for lastLine != nil && !lastLine.beforeDone {
			if lastLine.Prev != nil && lastLine.Prev.Seq == s {
				lastLine = lastLine.Prev
			} else {
				lastLine = nil
			}
		}
		if lastLine == nil || lastLine != a || !a.afterDone {
			return false
		}
		switch a.Outcome {
		case "completed":
			if a.Role.Class == Output {
				return a.Output || a.Receipt
			}
			return true
		default:
			// superseded when a later dispatch of the same work item exists.
			return laterOf[itemOf(a)].After(a.Start)
		}
	}
	bad := -1
	for _, s := range seqs {
		if !fine(s) {
			if seg := first[s].Segment; bad < 0 || seg < bad {
				bad = seg
			}
		} else {
			t.OnDisk = append(t.OnDisk, s)
		}
	}
	latestExisting := func(limit int) int {
		p := 0
		for i := 1; i <= len(u.slots) && i <= limit; i++ {
			if t.Boundaries[i].Exists {
				p = i
			}
		}
		return p
	}
	if bad < 0 {
		t.Position = t.End()
	} else {
		t.Position = latestExisting(bad)
	}
	seen := map[Item]bool{}
	for _, s := range seqs {
		if t.Position == t.End() || first[s].Segment < t.Position {
			t.Skip = append(t.Skip, s)
			continue
		}
		if it := t.Items[s]; !seen[it] {
			seen[it] = true
			t.Redo = append(t.Redo, it)
		}
	}
	for _, a := range u.attempts {
		if a.NoCommit && a.afterDone && last[a.Seq] == a && a.Segment < t.Position {
			t.Ambiguities = append(t.Ambiguities, Ambiguity{
				Check: "no-commit", Seq: a.Seq,
				Why:       "completed mutating dispatch whose work needed no commit, and no other commit near its window",
				Positions: []int{latestExisting(a.Segment)},
			})
		}
	}
	used := map[int]bool{}
	for _, s := range seqs {
		used[s] = true
	}
	for _, s := range u.fragSeqs {
		used[s] = true // only fragments the crash left are in fragSeqs by now
	}
	t.NextSeq = 1
	for s := range used {
		if s >= t.NextSeq {
			t.NextSeq = s + 1
		}
	}
}
