package pipesim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Decision is what a resume tool decided about a generated run, in the terms the
// truth can judge: the checkpoint it restores ("" none), the seqs it skips and
// re-executes, the next seq it would allocate, the lines it printed to explain
// itself (failed verifications and warnings), and, when the resume was executed,
// the seqs its new dispatches replay (their replay_of).
type Decision struct {
	Checkpoint string
	Skip, Redo []int
	NextSeq    int
	Explained  []string
	Executed   []int
	// Ran says the resume was executed, so Executed is meaningful.
	Ran bool
}

// Finding is one property a decision breaks, by class.
type Finding struct {
	// Property is safe, precise, one-decision or no-reuse.
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
	// Exact says the boundary and the work items equal the truth's.
	Exact bool
	// Explained says an earlier boundary is explained by a named failed check on
	// a dispatch the generator made genuinely ambiguous.
	Explained bool
	Findings  []Finding
}

// Judge compares a decision with the truth.
func Judge(t *Truth, d Decision) Verdict {
	v := Verdict{Position: t.decisionPosition(d)}
	add := func(prop, class, format string, args ...any) {
		v.Findings = append(v.Findings, Finding{Property: prop, Class: class, Detail: fmt.Sprintf(format, args...)})
	}
	truthSkip := map[int]bool{}
	for _, s := range t.Skip {
		truthSkip[s] = true
	}
	var skippedEarly []int
	for _, s := range d.Skip {
		if !truthSkip[s] {
			skippedEarly = append(skippedEarly, s)
		}
	}
	redo := t.itemsOf(d.Redo)
	missing := missingItems(t.Redo, redo)

	// safe: never later than the truth, never skipping work that is not on disk.
	if v.Position > t.Position {
		add("safe", "boundary-later", "boundary %s, truth %s", t.name(v.Position), t.name(t.Position))
	}
	if len(skippedEarly) > 0 {
		add("safe", "skips-unproven-work", "skips seqs %v whose work is not provably on disk (truth boundary %s)", skippedEarly, t.name(t.Position))
	}
	if v.Position <= t.Position && len(missing) > 0 && len(skippedEarly) == 0 {
		add("safe", "drops-work-item", "work items %v are neither skipped nor re-executed", missing)
	}

	// precise: the same boundary and the same work items, or an earlier boundary
	// explained by a genuine ambiguity.
	extra := missingItems(redo, t.Redo)
	dups := duplicateItems(redo)
	v.Exact = v.Position == t.Position && len(missing) == 0 && len(extra) == 0 && len(dups) == 0
	if v.Position < t.Position {
		v.Explained = t.explained(v.Position, d.Explained)
		if !v.Explained {
			class := "boundary-earlier"
			switch {
			case v.Position == -1:
				class = "foreign-checkpoint"
			case v.Position == -2:
				class = "unknown-checkpoint"
			case v.Position == 0 && t.Position == t.End():
				class = "complete-run-restarted"
			case t.Position == t.End():
				class = "complete-run-redone"
			case len(d.Explained) > 0 && hasVerificationFailure(d.Explained):
				class = "verification-fallback"
			}
			add("precise", class, "boundary %s, truth %s; first reasons given: %s", t.name(v.Position), t.name(t.Position), brief(d.Explained))
		}
	} else if v.Position == t.Position {
		if len(extra) > 0 {
			add("precise", "extra-work-items", "re-executes %v beyond the truth's %v", extra, t.Redo)
		}
		if len(dups) > 0 {
			add("precise", "item-twice", "re-executes work items %v more than once (a dispatch and its replays are one item)", dups)
		}
	}

	// one decision: what the resume executes is what the plan listed.
	if d.Ran {
		ran := t.itemsOf(d.Executed)
		if a, b := missingItems(redo, ran), missingItems(ran, redo); len(a) > 0 || len(b) > 0 || len(duplicateItems(ran)) > 0 {
			add("one-decision", "resume-differs-from-plan", "plan re-executes %v, the resume ran %v", redo, ran)
		}
	}

	// no reuse: the next seq is above every seq used anywhere.
	switch {
	case d.NextSeq < t.NextSeq:
		add("no-reuse", "next-seq-reused", "next seq %d, but seq %d is used", d.NextSeq, t.NextSeq-1)
	case d.NextSeq > t.NextSeq:
		add("precise", "next-seq-high", "next seq %d, truth %d", d.NextSeq, t.NextSeq)
	}
	return v
}

var verificationWords = regexp.MustCompile(`(?i)verif|no commit|no output|missing|not found`)

func hasVerificationFailure(lines []string) bool {
	for _, l := range lines {
		if verificationWords.MatchString(l) {
			return true
		}
	}
	return false
}

// decisionPosition places the decision's checkpoint among the truth's
// boundaries.
func (t *Truth) decisionPosition(d Decision) int {
	if d.Checkpoint == "" {
		if len(d.Redo) == 0 {
			return t.End()
		}
		return 0
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

// explained says the earlier boundary p is one an ambiguity allows and the
// decision named the failed check on that ambiguity's dispatch.
func (t *Truth) explained(p int, lines []string) bool {
	for _, a := range t.Ambiguities {
		allowed := false
		for _, q := range a.Positions {
			if q == p {
				allowed = true
			}
		}
		if !allowed {
			continue
		}
		seq := regexp.MustCompile(fmt.Sprintf(`\b(seq )?%d\b`, a.Seq))
		for _, l := range lines {
			if seq.MatchString(l) {
				return true
			}
		}
	}
	return false
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
		it, ok := t.Items[s]
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
		return a.Task < b.Task
	})
}

// String renders an item as "role phase/tN".
func (it Item) String() string {
	if it.Task > 0 {
		return fmt.Sprintf("%s@%s/t%d", it.Role, it.Phase, it.Task)
	}
	return fmt.Sprintf("%s@%s", it.Role, it.Phase)
}

// brief quotes the first two lines that name a failed check (else the first
// two lines), each cut to 160 bytes, to keep a finding readable.
func brief(lines []string) string {
	var picked []string
	for _, l := range lines {
		if verificationWords.MatchString(l) && len(picked) < 2 {
			picked = append(picked, l)
		}
	}
	if len(picked) == 0 {
		picked = lines[:min(2, len(lines))]
	}
	var b strings.Builder
	for i, l := range picked {
		if len(l) > 160 {
			l = l[:160] + "..."
		}
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%q", l)
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}
