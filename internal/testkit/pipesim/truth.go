package pipesim

import (
	"sort"
	"time"
)

// Item is one unit of the pipeline's work: a dispatch, its retries and its
// replays share it and are re-dispatched once.
//
// Role, phase and task name it in the manifest; N tells apart the script's
// distinct dispatches that share all three (the parallel investigators of a
// debugging run, the implementers of two fix cycles): the generator knows
// which attempts are retries or replays of one dispatch because it made them.
type Item struct {
	Role  string `json:"role"`
	Phase string `json:"phase"`
	Task  int    `json:"task,omitempty"`
	N     int    `json:"n,omitempty"`
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
// Positions (or a boundary equivalent to one, see Same), and must name a failed
// check on one of Seqs when it does.
type Ambiguity struct {
	Check     string `json:"check"`
	Seqs      []int  `json:"seqs"`
	Why       string `json:"why"`
	Positions []int  `json:"positions"`
}

// SeqTruth is what is true of one seq the run used for a dispatch.
type SeqTruth struct {
	Item Item `json:"item"`
	// Segment is the number of checkpoint slots before its first attempt: it
	// lies between Boundaries[Segment] and the next boundary.
	Segment int `json:"segment"`
	// Mutating says its work is commits to the project (a restore undoes them).
	Mutating bool `json:"mutating,omitempty"`
	// OnDisk says its work is on disk, or needed none.
	OnDisk bool `json:"on_disk"`
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
	Skip    []int  `json:"skip"`
	Redo    []Item `json:"redo"`
	NextSeq int    `json:"next_seq"`
	// Seqs holds every seq this run used for a dispatch.
	Seqs        map[int]SeqTruth `json:"seqs"`
	Ambiguities []Ambiguity      `json:"ambiguities"`
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

// RedoAt is the work items a resume from boundary p re-executes: those of every
// seq at or after it, each once, in seq order (none at the end).
func (t *Truth) RedoAt(p int) []Item {
	if p >= t.End() {
		return nil
	}
	var out []Item
	seen := map[Item]bool{}
	for _, s := range t.sortedSeqs() {
		st := t.Seqs[s]
		if st.Segment >= p && !seen[st.Item] {
			seen[st.Item] = true
			out = append(out, st.Item)
		}
	}
	return out
}

// Same says boundaries p and q are one restart place: no dispatch lies between
// them, so restoring either leaves the same project and the same work to redo.
func (t *Truth) Same(p, q int) bool {
	if p < 0 || q < 0 {
		return p == q
	}
	lo, hi := min(p, q), max(p, q)
	for _, st := range t.Seqs {
		if st.Segment >= lo && (st.Segment < hi || hi == t.End()) {
			return false
		}
	}
	return true
}

func (t *Truth) sortedSeqs() []int {
	seqs := make([]int, 0, len(t.Seqs))
	for s := range t.Seqs {
		seqs = append(seqs, s)
	}
	sort.Ints(seqs)
	return seqs
}

func itemOf(a *attempt) Item {
	return Item{Role: a.Role.Name, Phase: a.Phase, Task: a.Role.Task, N: a.Inst}
}

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
	// neverStarted says no attempt on seq s has its dispatched line and no
	// later seq has one either: dispatch.py appends that line before the
	// orchestrator starts the agent, so its agent never ran and left nothing,
	// and no recorded work after it could have needed it. It needs no
	// restore: the resume hands it to the skill from where it lies.
	recordedAfter := map[int]bool{}
	latestRecorded := 0
	for _, a := range u.attempts {
		if a.beforeDone && a.Seq > latestRecorded {
			latestRecorded = a.Seq
		}
	}
	for _, s := range seqs {
		recordedAfter[s] = latestRecorded > s
	}
	neverStarted := func(s int) bool {
		for a := last[s]; a != nil && a.Seq == s; a = a.Prev {
			if a.beforeDone {
				return false
			}
		}
		return !recordedAfter[s]
	}
	t.Seqs = map[int]SeqTruth{}
	laterOf := map[Item]time.Time{}
	for _, s := range seqs {
		it := itemOf(last[s])
		t.Seqs[s] = SeqTruth{Item: it, Segment: first[s].Segment, Mutating: last[s].Role.Class == Mutating}
		// an attempt never started supersedes nothing: the work is undone
		if !neverStarted(s) && last[s].Start.After(laterOf[it]) {
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
	bad, notStarted := -1, -1
	for _, s := range seqs {
		if !fine(s) {
			if seg := first[s].Segment; neverStarted(s) {
				if notStarted < 0 || seg < notStarted {
					notStarted = seg
				}
			} else if bad < 0 || seg < bad {
				bad = seg
			}
		} else {
			st := t.Seqs[s]
			st.OnDisk = true
			t.Seqs[s] = st
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
	// restartAt is where a resume that cannot go past boundary limit restarts: the
	// newest checkpoint of this run at or before it (a missing one falls back to
	// an earlier one, which the restore then guarantees); with none of them at
	// all, nothing can be restored, so the resume keeps the disk as it is and
	// starts at limit itself (SPEC §4 step 4: "no checkpoint at all"): going
	// back further would redo proven work without guaranteeing any more.
	// In a skill no profile describes, a checkpoint never taken leaves no trace
	// of its boundary: only phase starts are known without one.
	knowable := func(i int) bool {
		return i == 0 || !u.sc.PhaseBoundaries || u.slots[i-1].PhaseStart
	}
	restartAt := func(limit int) int {
		if p := latestExisting(limit); p > 0 {
			return p
		}
		for !knowable(limit) {
			limit--
		}
		return limit
	}
	switch {
	case bad >= 0:
		t.Position = restartAt(bad) // at or before every seq never started
	case notStarted >= 0:
		t.Position = notStarted
	default:
		t.Position = t.End()
	}
	seen := map[Item]bool{}
	for _, s := range seqs {
		if t.Position == t.End() || first[s].Segment < t.Position {
			t.Skip = append(t.Skip, s)
			continue
		}
		if it := t.Seqs[s].Item; !seen[it] {
			seen[it] = true
			t.Redo = append(t.Redo, it)
		}
	}
	// an ambiguity is in effect when the crash left its dispatches completed
	// and the truth's boundary after them: then a resume may fall back to the
	// boundary before them.
	for _, m := range u.amb {
		seg, live := m.Attempts[0].Segment, true
		var amb []int
		for _, a := range m.Attempts {
			live = live && a.afterDone && last[a.Seq] == a
			amb = append(amb, a.Seq)
		}
		if live && seg < t.Position {
			t.Ambiguities = append(t.Ambiguities, Ambiguity{Check: m.Check, Seqs: amb, Why: m.Why, Positions: []int{restartAt(seg)}})
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
