package pipesim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Decision is what a resume tool decided about a generated run, in the terms the
// truth can judge: the checkpoint it restores ("" none), the seqs it skips and
// re-executes, the next seq it would allocate, the failed verifications it named
// and its warnings, and, when the resume was executed, what it dispatched.
type Decision struct {
	Checkpoint string
	Skip, Redo []int
	NextSeq    int
	// Failed are the failed verifications the decision names.
	Failed []Failed
	// Notes are its other explanations (warnings), shown in findings only.
	Notes []string
	// Executed are the seqs the executed resume's dispatches replay (their
	// replay_of), once per dispatch; Unlinked counts its dispatches that replay
	// nothing (no replay_of).
	Executed []int
	Unlinked int
	// Ran says the resume was executed, so Executed and Unlinked are meaningful;
	// Said is what it answered (exit code, last line), for findings.
	Ran  bool
	Said string
	// Refuses says the plan itself says a real run stops before it changes
	// anything (a failed preflight check): then the resume must execute nothing.
	Refuses bool
}

// Failed is one failed verification a decision names: the seq it failed on and
// the check.
type Failed struct {
	Seq   int
	Check string
	Line  string
}

// Finding is one property a decision breaks, by class. Every finding fails the
// property test.
type Finding struct {
	// Property is safe, precise, work-items, one-decision, no-reuse or next-seq.
	Property string
	// Class names the kind of failure, for statistics.
	Class  string
	Detail string
}

// Verdict is the judgement of one decision.
type Verdict struct {
	// Position is the decision's boundary in the truth's Boundaries (-1: another
	// run's checkpoint, -2: a checkpoint nobody took).
	Position int
	// Boundary says the decision's boundary is the truth's (or one with no
	// dispatch between them): what "precise" counts.
	Boundary bool
	// Exact says the boundary and the work items equal the truth's.
	Exact bool
	// Explained says an earlier boundary is explained by a named failed check on
	// a dispatch the generator made genuinely ambiguous, and is one that
	// ambiguity allows.
	Explained bool
	Findings  []Finding
}

// Judge compares a decision with the truth. The properties, as issue 28 states
// them:
//
//   - safe: never a boundary later than the truth, and no skipped seq whose work
//     is not on disk (or whose commits the decision's own restore undoes);
//   - precise: the boundary equals the truth's (the >= 99% share is counted over
//     all seeds by the caller, from Verdict.Boundary); an earlier one must be
//     explained by a named failed check on a dispatch of an ambiguity the truth
//     records, and be a boundary that ambiguity allows;
//   - work-items: the decision re-executes the work items of its own boundary,
//     each once (a dispatch and its retries and replays are one item);
//   - one-decision: the items an executed resume dispatched equal the plan's,
//     as multisets, and it dispatched nothing that replays no seq;
//   - no-reuse: the next seq is above every seq used anywhere (next-seq: and
//     exactly one above the highest).
func Judge(t *Truth, d Decision) Verdict {
	v := Verdict{Position: t.decisionPosition(d)}
	add := func(prop, class, format string, args ...any) {
		v.Findings = append(v.Findings, Finding{Property: prop, Class: class, Detail: fmt.Sprintf(format, args...)})
	}
	p := v.Position

	// safe
	if p > t.Position && !t.Same(p, t.Position) && d.Checkpoint != "" {
		// a decision that restores nothing is placed at the first segment it
		// redoes; the work it keeps before that is judged by what it skips
		// (skips-unproven-work) and leaves undone (drops-unfinished-item)
		add("safe", "boundary-later", "boundary %s, truth %s", t.name(p), t.name(t.Position))
	}
	var unproven, undone []int
	for _, s := range d.Skip {
		st, ok := t.Seqs[s]
		switch {
		case !ok || !st.OnDisk:
			unproven = append(unproven, s)
		case st.Mutating && p >= 1 && p < t.End() && st.Segment >= p && d.Checkpoint != "":
			// a decision that restores nothing undoes nothing: the work it
			// keeps on disk stays there
			undone = append(undone, s)
		}
	}
	if len(unproven) > 0 {
		add("safe", "skips-unproven-work", "skips seqs %v whose work is not on disk (truth boundary %s)", unproven, t.name(t.Position))
	}
	if len(undone) > 0 {
		add("safe", "skips-undone-work", "skips seqs %v whose commits its own restore of %s undoes", undone, t.name(p))
	}

	// precise
	v.Boundary = p >= 0 && t.Same(p, t.Position)
	if p < t.Position && !v.Boundary {
		v.Explained = t.explained(p, d.Failed)
		if !v.Explained {
			class := "boundary-earlier"
			switch {
			case p == -1:
				class = "foreign-checkpoint"
			case p == -2:
				class = "unknown-checkpoint"
			case p == 0 && t.Position == t.End():
				class = "complete-run-restarted"
			case t.Position == t.End():
				class = "complete-run-redone"
			case len(d.Failed) > 0:
				class = "verification-fallback"
			}
			add("precise", class, "boundary %s, truth %s; %s", t.name(p), t.name(t.Position), brief(d))
		}
	}

	// work-items: those of the decision's own boundary, each once.
	redo := t.itemsOf(d.Redo)
	if p >= 0 {
		want := t.RedoAt(p)
		missing, extra, dups := missingItems(want, redo), missingItems(redo, want), duplicateItems(redo)
		var unfinished []Item
		for _, it := range missing {
			if !t.itemOnDisk(it) {
				unfinished = append(unfinished, it)
			}
		}
		if len(unfinished) > 0 {
			add("safe", "drops-unfinished-item", "work items %v are not on disk, yet not re-executed", unfinished)
		}
		if len(missing) > len(unfinished) && d.Checkpoint != "" {
			// with no restore, the completed work on disk after the boundary
			// is kept, not re-executed: done again on the unrestored tree it
			// would be done twice
			add("work-items", "drops-work-item", "work items %v at or after boundary %s are not re-executed", missing, t.name(p))
		}
		if len(extra) > 0 {
			add("work-items", "extra-work-items", "re-executes %v beyond the %v of boundary %s", extra, want, t.name(p))
		}
		if len(dups) > 0 {
			add("work-items", "item-twice", "re-executes work items %v more than once (a dispatch and its replays are one item)", dups)
		}
		v.Exact = v.Boundary && len(missing) == 0 && len(extra) == 0 && len(dups) == 0
	}

	// one decision: what the resume executes is what the plan listed.
	if d.Ran {
		ran := t.itemsOf(d.Executed)
		for i := 0; i < d.Unlinked; i++ {
			ran = append(ran, Item{Role: "<a dispatch with no replay_of>"})
		}
		want := redo
		if d.Refuses {
			want = nil
		}
		if !sameMultiset(want, ran) {
			sortItems(ran)
			add("one-decision", "resume-differs-from-plan", "plan re-executes %v (refuses: %v), the resume ran %v and said %q", sorted(redo), d.Refuses, ran, d.Said)
		}
	}

	// no reuse: the next seq is above every seq used anywhere.
	switch {
	case d.NextSeq < t.NextSeq:
		add("no-reuse", "next-seq-reused", "next seq %d, but seq %d is used", d.NextSeq, t.NextSeq-1)
	case d.NextSeq > t.NextSeq:
		add("next-seq", "next-seq-high", "next seq %d, truth %d (one above the highest seq used)", d.NextSeq, t.NextSeq)
	}
	return v
}

// itemOnDisk says every seq of work item it has its work on disk.
func (t *Truth) itemOnDisk(it Item) bool {
	found := false
	for _, st := range t.Seqs {
		if st.Item == it {
			found = true
			if !st.OnDisk {
				return false
			}
		}
	}
	return found
}

// sameMultiset says a and b hold the same items the same number of times.
func sameMultiset(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[Item]int{}
	for _, it := range a {
		n[it]++
	}
	for _, it := range b {
		n[it]--
		if n[it] < 0 {
			return false
		}
	}
	return true
}

func sorted(items []Item) []Item {
	out := slices.Clone(items)
	sortItems(out)
	return out
}

// explained says the earlier boundary p is one an ambiguity allows (or one
// with no dispatch between them) and the decision named a failed check on one of
// that ambiguity's seqs.
func (t *Truth) explained(p int, failed []Failed) bool {
	for _, a := range t.Ambiguities {
		allowed := false
		for _, q := range a.Positions {
			allowed = allowed || t.Same(p, q)
		}
		if !allowed {
			continue
		}
		for _, f := range failed {
			if f.Check != "" && slices.Contains(a.Seqs, f.Seq) {
				return true
			}
		}
	}
	return false
}

// decisionPosition places the decision's checkpoint among the truth's
// boundaries.
//
// A decision that restores nothing sits at the end when it redoes nothing, at
// the start when it skips nothing, and otherwise at the boundary before the
// first work it redoes: a resume from a checkpoint that was never taken, on the
// disk as the crash left it.
func (t *Truth) decisionPosition(d Decision) int {
	if d.Checkpoint == "" {
		switch {
		case len(d.Redo) == 0:
			return t.End()
		case len(d.Skip) == 0:
			return 0
		}
		p := t.End()
		for _, s := range d.Redo {
			if st, ok := t.Seqs[s]; ok && st.Segment < p {
				p = st.Segment
			}
		}
		if p == t.End() {
			return 0
		}
		return p
	}
	if p := t.PositionOf(d.Checkpoint); p >= 0 {
		return p
	}
	for h := range t.Foreign {
		if strings.HasPrefix(h, d.Checkpoint) || strings.HasPrefix(d.Checkpoint, h) {
			return -1
		}
	}
	for i, b := range t.Boundaries {
		if b.Hash != "" && strings.HasPrefix(b.Hash, d.Checkpoint) {
			return i
		}
	}
	return -2
}

func (t *Truth) name(p int) string {
	switch {
	case p == -1:
		return "another run's checkpoint"
	case p == -2:
		return "an unknown checkpoint"
	case p >= 0 && p < len(t.Boundaries):
		b := t.Boundaries[p]
		if b.Hash != "" {
			return fmt.Sprintf("#%d %s (%s)", p, b.Name, b.Hash[:8])
		}
		return fmt.Sprintf("#%d %s", p, b.Name)
	}
	return fmt.Sprint(p)
}

// itemsOf maps seqs to work items; a seq the run never used maps to a
// placeholder item naming it, so it shows up as a difference.
func (t *Truth) itemsOf(seqs []int) []Item {
	var out []Item
	for _, s := range seqs {
		st, ok := t.Seqs[s]
		it := st.Item
		if !ok {
			it = Item{Role: fmt.Sprintf("<unknown seq %d>", s)}
		}
		out = append(out, it)
	}
	return out
}

// missingItems lists the items of want that got lacks.
func missingItems(want, got []Item) []Item {
	have := map[Item]bool{}
	for _, it := range got {
		have[it] = true
	}
	var out []Item
	seen := map[Item]bool{}
	for _, it := range want {
		if !have[it] && !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	sortItems(out)
	return out
}

func duplicateItems(items []Item) []Item {
	n := map[Item]int{}
	var out []Item
	for _, it := range items {
		n[it]++
		if n[it] == 2 {
			out = append(out, it)
		}
	}
	sortItems(out)
	return out
}

func sortItems(items []Item) {
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.N < b.N
	})
}

// String renders an item as "role@phase/tN", with "#n" for the n-th other
// dispatch of that role, phase and task.
func (it Item) String() string {
	s := it.Role + "@" + it.Phase
	if it.Task > 0 {
		s += fmt.Sprintf("/t%d", it.Task)
	}
	if it.N > 0 {
		s += fmt.Sprintf("#%d", it.N)
	}
	return s
}

// brief quotes the first two failed checks a decision names (else its first two
// warnings), each cut to 160 bytes, to keep a finding readable.
func brief(d Decision) string {
	var picked []string
	for _, f := range d.Failed {
		if len(picked) < 2 {
			picked = append(picked, f.Line)
		}
	}
	what := "failed checks"
	if len(picked) == 0 {
		picked = d.Notes[:min(2, len(d.Notes))]
		what = "no failed check; warnings"
	}
	if len(picked) == 0 {
		return "no failed check, no warning"
	}
	var b strings.Builder
	b.WriteString(what + ": ")
	for i, l := range picked {
		if len(l) > 160 {
			l = l[:160] + "..."
		}
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%q", l)
	}
	return b.String()
}
