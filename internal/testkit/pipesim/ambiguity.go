package pipesim

import (
	"fmt"
	"strings"
	"time"
)

// made is an ambiguity the generator built on purpose: dispatches whose work
// was done, in a way nothing on disk can tell apart from work that was not.
type made struct {
	Check    string
	Why      string
	Attempts []*attempt
}

// Ambiguity kinds, by the check a resume may legitimately fail on them.
const (
	// AmbNoCommit: a completed mutating dispatch whose work needed no commit,
	// with no other commit anywhere near its window.
	AmbNoCommit = "no-commit"
	// AmbTwinCommit: two parallel completed mutating dispatches and one commit
	// whose message matches both equally, inside both windows: either of them
	// may be the one whose work needed no commit.
	AmbTwinCommit = "twin-commit"
	// AmbMisleadingTask: one commit naming the task of a parallel sibling that
	// committed nothing, made by the other dispatch: the task number points at
	// the wrong dispatch, and nothing else separates them.
	AmbMisleadingTask = "misleading-task-number"
	// AmbEmptyOutput: a completed output dispatch whose output file is there
	// but empty, with no receipt: an agent with nothing to report, or a write
	// that never finished.
	AmbEmptyOutput = "empty-output"
)

// twinMessage matches every task of the plan equally: it names none and shares
// only "implement" with every task's description.
const twinMessage = "feat: implement the billing changes"

// shape gives the run at most one of the special shapes: rarely a genuine
// ambiguity (tried on 2.4% of seeds, made on fewer: twins need a wave of two
// or more implementers; in effect on fewer still: the crash must leave the
// dispatches completed and the truth's boundary after them), more often its
// unambiguous sibling, which a resume must get exactly right.
func (u *run) shape() {
	switch k := u.r.IntN(1000); {
	case k < 4:
		u.noCommit()
	case k < 12:
		u.twin(true)
	case k < 20:
		u.misleadingTask(true)
	case k < 24:
		u.emptyOutput(true)
	case k < 60:
		u.twin(false)
	case k < 100:
		u.misleadingTask(false)
	case k < 140:
		u.emptyOutput(false)
	}
}

// finished are the attempts completed on their first try, of class c.
func (u *run) finished(c Class) []*attempt {
	var out []*attempt
	for _, a := range u.attempts {
		if a.Role.Class == c && a.Prev == nil && a.Outcome == "completed" {
			out = append(out, a)
		}
	}
	return out
}

// pair picks two parallel task implementers of one group whose windows overlap
// by at least two minutes, or nil.
func (u *run) pair() (a, b *attempt) {
	var pairs [][2]*attempt
	fin := u.finished(Mutating)
	for i, x := range fin {
		for _, y := range fin[i+1:] {
			if x.Group == y.Group && x.Role.Task > 0 && y.Role.Task > 0 {
				lo, hi := overlap(x, y)
				if hi.Sub(lo) >= 2*time.Minute {
					pairs = append(pairs, [2]*attempt{x, y})
				}
			}
		}
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	p := pick(u.r, pairs)
	if u.r.IntN(2) == 0 {
		return p[1], p[0]
	}
	return p[0], p[1]
}

// implementers are the mutating attempts of parallel group g that completed on
// their first try.
func (u *run) implementers(g int) []*attempt {
	var out []*attempt
	for _, a := range u.finished(Mutating) {
		if a.Group == g {
			out = append(out, a)
		}
	}
	return out
}

func overlap(a, b *attempt) (lo, hi time.Time) {
	lo, hi = a.Start, a.End
	if b.Start.After(lo) {
		lo = b.Start
	}
	if b.End.Before(hi) {
		hi = b.End
	}
	return lo, hi
}

// clear says no commit of any attempt but the given ones (and, with group,
// the other attempts of their parallel group) falls within five minutes of their
// windows: nothing from elsewhere on disk could stand in for theirs.
func (u *run) clear(group bool, own ...*attempt) bool {
	lo, hi := own[0].Start, own[0].End
	mine := map[*attempt]bool{}
	for _, a := range own {
		mine[a] = true
		if a.Start.Before(lo) {
			lo = a.Start
		}
		if a.End.After(hi) {
			hi = a.End
		}
	}
	lo, hi = lo.Add(-5*time.Minute), hi.Add(5*time.Minute)
	for _, b := range u.attempts {
		if mine[b] || (group && b.Group == own[0].Group) {
			continue
		}
		for _, c := range b.Commits {
			if !c.At.Before(lo) && !c.At.After(hi) {
				return false
			}
		}
	}
	return true
}

// newCommit is a commit of a at at with message msg (naming task named, 0 none).
func (u *run) newCommit(a *attempt, at time.Time, msg string, named int) *projCommit {
	c := u.commitFor(a, at.Truncate(time.Second), false)
	c.Msg, c.TaskNamed = msg, named
	c.Content = fmt.Sprintf("// %s (commit %d of session %s)\n", c.Msg, u.lastMsgIdx, u.sid)
	return c
}

func (u *run) noCommit() {
	fin := u.finished(Mutating)
	if len(fin) == 0 {
		return
	}
	a := pick(u.r, fin)
	if !u.clear(false, a) {
		return
	}
	a.Commits, a.NoCommit = nil, true
	u.amb = append(u.amb, &made{Check: AmbNoCommit, Attempts: []*attempt{a},
		Why: "completed mutating dispatch whose work needed no commit, and no other commit near its window"})
	u.shapes["ambiguity-"+AmbNoCommit] = true
}

// twin makes two parallel implementers' commits indistinguishable: the same
// message, matching both tasks equally, at times inside both windows. Ambiguous:
// only one of them committed (the other's work needed none), so either may be
// the one a resume cannot verify. Otherwise both committed, and any assignment
// that verifies the most dispatches verifies both.
func (u *run) twin(ambiguous bool) {
	a, b := u.pair()
	if a == nil || (ambiguous && !u.clear(true, a, b)) {
		return
	}
	lo, hi := overlap(a, b)
	span := hi.Sub(lo)
	if ambiguous {
		a.Commits = []*projCommit{u.newCommit(a, lo.Add(span/2), twinMessage, 0)}
		b.Commits, b.NoCommit = nil, true
		u.amb = append(u.amb, &made{Check: AmbTwinCommit, Attempts: u.implementers(a.Group),
			Why: "two parallel completed implementers, one commit whose message matches both equally inside both windows: the wave has one commit fewer than implementers, and any of them may be the one left without"})
		u.shapes["ambiguity-"+AmbTwinCommit] = true
		return
	}
	a.Commits = []*projCommit{u.newCommit(a, lo.Add(span/3), twinMessage, 0)}
	b.Commits = []*projCommit{u.newCommit(b, lo.Add(2*span/3), twinMessage, 0)}
	u.shapes["twin-commits"] = true
}

// misleadingTask makes a's one commit name b's task, inside both windows.
// Ambiguous: b committed nothing (its work needed no commit), so the task number
// points a resume at the wrong dispatch and nothing else separates them.
// Otherwise b has its own commit, and the assignment that verifies the most
// dispatches gives a the commit that names b.
func (u *run) misleadingTask(ambiguous bool) {
	a, b := u.pair()
	if a == nil || (ambiguous && !u.clear(true, a, b)) {
		return
	}
	lo, hi := overlap(a, b)
	msg := fmt.Sprintf("feat: task %d %s", b.Role.Task, taskWords(b))
	a.Commits = []*projCommit{u.newCommit(a, lo.Add(hi.Sub(lo)/2), msg, b.Role.Task)}
	if !ambiguous {
		u.shapes["misleading-task-number"] = true
		return
	}
	b.Commits, b.NoCommit = nil, true
	u.amb = append(u.amb, &made{Check: AmbMisleadingTask, Attempts: u.implementers(a.Group),
		Why: fmt.Sprintf("task %d's commit names task %d, which completed without committing: the wave has one commit fewer than implementers, and any of them may be the one left without", a.Role.Task, b.Role.Task)})
	u.shapes["ambiguity-"+AmbMisleadingTask] = true
}

// taskWords are the first words of a task's text after "Implement the",
// lower case: the words a commit for that task would share with it.
func taskWords(a *attempt) string {
	_, text, _ := strings.Cut(a.Role.Desc, "Implement the ")
	words := strings.Fields(strings.ToLower(strings.TrimSuffix(text, ".")))
	return strings.Join(words[:min(len(words), 4)], " ")
}

// emptyOutput leaves a completed output dispatch's file empty. Ambiguous without
// a receipt; with one, the receipt proves the work.
func (u *run) emptyOutput(ambiguous bool) {
	var cands []*attempt
	for _, a := range u.finished(Output) {
		if a.Output {
			cands = append(cands, a)
		}
	}
	if len(cands) == 0 {
		return
	}
	a := pick(u.r, cands)
	a.EmptyOutput, a.Receipt = true, !ambiguous
	if !ambiguous {
		u.shapes["empty-output-with-receipt"] = true
		return
	}
	u.amb = append(u.amb, &made{Check: AmbEmptyOutput, Attempts: []*attempt{a},
		Why: "completed output dispatch whose output file is empty, with no receipt"})
	u.shapes["ambiguity-"+AmbEmptyOutput] = true
}
