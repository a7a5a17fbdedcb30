package pipesim

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// xGoneEvidence is what the generator knows, before a resume runs, of the
// dispatch files it cut or removed: the evidence xExplains may name.
type xGoneEvidence struct {
	lines map[int]xLineRec
	// torn maps the seq of every dispatch file a crash cut before its unit's
	// instructions, with no manifest line, to its unit
	torn map[int]int
	// gone is the unit of the file the generator removed, -1 none
	gone int
	// min is the minimum redo with a set of those units counted as not on
	// disk, keyed by xUnitsKey
	min map[string]int
	// placed is the minimum redo with the removed file's dispatch (in flight,
	// failed, or completed and counted as not on disk: with no header time its
	// commit window is unbounded) placed in the group of the latest dispatch with a header time whose
	// first manifest line precedes its own, when that group is earlier than
	// its own (the lines bound it, a checkpoint lies between the bounds, and
	// the time that said on which side is gone); -1 none
	placed int
	// killed maps each mutating unit whose latest attempt is a replay killed
	// in flight (a replay line with no completion line) while an earlier
	// attempt at it completed, to that replay's seq: nothing says whether
	// the replay's work is whole
	killed map[int]int
	// minKilled is the minimum redo with the killed units counted as not on
	// disk, -1 none
	minKilled int
	// undoCand are the mutating units whose latest attempt completed after a
	// mutating attempt that never completed had started (its first manifest
	// line before their completion line): both at work in one tree, so their
	// commit may hold some of its work (their minimums are in min, with
	// the torn and removed files' units). Never completed: in flight, or
	// ended failed or error as its unit's latest attempt (the product undoes
	// what a failed attempt left as it does an interrupted one's)
	undoCand map[int]bool
	// undoInert says that counting undoCand as not on disk changes no
	// minimum (with or without the torn and removed files' units): a plan
	// naming them is explained, if at all, on the other units it names
	undoInert bool
}

func xUnitsKey(units []int) string {
	units = slices.Clone(units)
	slices.Sort(units)
	units = slices.Compact(units)
	return fmt.Sprint(units)
}

// xGone reads the evidence before the resume changes the disk: the minimum
// is what the disk at the crash needs.
// base is the minimum with nothing counted as not on disk (xMinRedo), -1 to
// compute it when needed.
func (s *XScenario) xGone(L xLayout, sent map[int]bool, base int) *xGoneEvidence {
	g := &xGoneEvidence{lines: s.xReadLines(L), torn: map[int]int{}, gone: -1, min: map[string]int{}, placed: -1}
	g.placed = s.xPlacedEarly(L, sent, g.lines)
	g.killed, g.minKilled = map[int]int{}, -1
	g.undoCand = map[int]bool{}
	// the lines of attempts in flight, and each seq's first and last line in
	// the manifest of its latest line; units are read (xRowUnit may read a
	// dispatch file) only for the seqs that can matter
	var inFlight, ended []int
	first, last := map[int]int{}, map[int]int{}
	for i, l := range s.xReadAll(L) {
		if l.path != g.lines[l.Seq].path {
			continue
		}
		if _, ok := first[l.Seq]; !ok {
			first[l.Seq] = i
		}
		last[l.Seq] = i
	}
	for seq, l := range g.lines {
		switch l.Status {
		case "dispatched":
			inFlight = append(inFlight, seq)
		case "failed", "error":
			ended = append(ended, seq)
		}
	}
	if len(inFlight) > 0 || len(ended) > 0 {
		inFlight = sortedInts(inFlight)
		unitOf := func(seq int) (int, bool) { return s.xRowUnit(L, g.lines, seq) }
		openUnit := map[int]int{} // in-flight seq -> its mutating unit
		opened := len(s.xReadAll(L))
		for _, seq := range inFlight {
			if u, ok := unitOf(seq); ok && s.Units[u].Class == Mutating {
				openUnit[seq] = u
				opened = min(opened, first[seq])
			}
		}
		// a mutating attempt that ended failed or error and is its unit's
		// latest attempt (no line of a later attempt at it) never completed
		// either: what it left is undone like an interrupted attempt's
		failedUnit := map[int]int{} // such a seq -> its unit
		for _, seq := range sortedInts(ended) {
			u, ok := unitOf(seq)
			if !ok || s.Units[u].Class != Mutating {
				continue
			}
			latest := true
			for other := range g.lines {
				if other != seq && first[other] > first[seq] {
					if v, ok := unitOf(other); ok && v == u {
						latest = false
						break
					}
				}
			}
			if latest {
				failedUnit[seq] = u
				opened = min(opened, first[seq])
			}
		}
		completed := map[int]bool{} // units with a completed attempt
		var killed []int
		for seq, l := range g.lines {
			if l.Status != "completed" {
				continue
			}
			u, ok := unitOf(seq)
			if !ok {
				continue
			}
			completed[u] = true
			if s.Units[u].Class != Mutating || last[seq] < opened {
				continue
			}
			for _, open := range []map[int]int{openUnit, failedUnit} {
				for other, v := range open {
					// completed after a mutating attempt at other work,
					// which never completed, had started: both at work in
					// one tree
					if v != u && first[other] < last[seq] {
						g.undoCand[u] = true
					}
				}
			}
		}
		for seq, u := range openUnit {
			if g.lines[seq].ReplayOf != nil && completed[u] {
				if _, again := g.killed[u]; !again {
					killed = append(killed, u)
				}
				g.killed[u] = max(g.killed[u], seq) // its latest replay
			}
		}
		if len(killed) > 0 {
			g.minKilled, _ = s.xMinRedo(L, sent, killed...)
		}
	}
	var undo []int
	for u := range g.undoCand {
		undo = append(undo, u)
	}
	var cand []int
	for seq := range s.tornFiles {
		u, ok := s.fileUnit[seq]
		if _, recorded := g.lines[seq]; !ok || recorded || s.xFileHoldsDesc(L, seq, &s.Units[u]) {
			continue
		}
		g.torn[seq] = u
		cand = append(cand, u)
	}
	if u, ok := s.fileUnit[s.missingSeq]; ok && s.missingSeq != 0 && s.Units[u].Task == 0 {
		g.gone = u
		cand = append(cand, u)
	}
	cand = slices.Compact(sortedInts(cand))
	if len(undo) > 0 {
		// counting them not on disk too changes no minimum when it leaves
		// both the one without any unit counted and the one with only the
		// other units unchanged (a restore redoes them anyway): then no
		// redo is explained on them, and their minimums are not computed
		if base < 0 {
			base, _ = s.xMinRedo(L, sent)
		}
		without := base
		if len(cand) > 0 {
			without, _ = s.xMinRedo(L, sent, cand...)
		}
		if all, _ := s.xMinRedo(L, sent, append(slices.Clone(cand), undo...)...); all == without {
			alone := base
			if len(cand) > 0 {
				alone, _ = s.xMinRedo(L, sent, undo...)
			}
			if alone == base {
				undo, g.undoInert = nil, true
			}
		}
	}
	if len(cand) > 3 {
		cand = cand[:3]
	}
	// the undo's units: each subset when they are few, else none or all of
	// them (the product names every kept item whose commit lies above the
	// undo's start)
	undo = sortedInts(undo)
	undoSets := [][]int{nil}
	if len(undo) <= 2 {
		for mask := 1; mask < 1<<len(undo); mask++ {
			undoSets = append(undoSets, xSubset(undo, mask))
		}
	} else {
		undoSets = append(undoSets, undo)
	}
	for mask := 0; mask < 1<<len(cand); mask++ {
		for _, us := range undoSets {
			set := append(xSubset(cand, mask), us...)
			key := xUnitsKey(set)
			if _, done := g.min[key]; len(set) == 0 || done {
				continue
			}
			g.min[key], _ = s.xMinRedo(L, sent, set...)
		}
	}
	return g
}

// xSubset is the items of xs whose bits are set in mask.
func xSubset(xs []int, mask int) []int {
	var out []int
	for i, x := range xs {
		if mask&(1<<i) != 0 {
			out = append(out, x)
		}
	}
	return out
}

func sortedInts(xs []int) []int {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs
}

// xExplains says whether a resume that redid redo items, more than the
// minimum, is explained by dispatch files the generator cut or removed.
// Cut: a planned item whose dispatch file a crash cut before its unit's
// instructions (its description line), with no manifest line (its agent
// never started), so nothing on disk says which work it was, whether a later
// dispatch of its role and phase did it, or whether it is the same work as
// another item. Removed: a task-less planned item that ended failed or error,
// when the file the generator removed is that attempt's or a later attempt's
// at its unit (a task-less failure is superseded only by the same
// instructions, and one side of that comparison is gone). On those items and
// nothing wider: the redo must be exactly the minimum with those units counted
// as not on disk, plus one item for each further row of the plan those units
// have (an attempt the product cannot join to its unit's other attempts). It
// returns what it names, "" when it does not explain the redo.
func (g *xGoneEvidence) xExplains(s *XScenario, L xLayout, h handoff, redo int) string {
	if why := g.xExplainsKilled(s, L, h, redo); why != "" {
		return why
	}
	rows := map[int]int{} // unit -> the plan's rows for it
	var units []int
	var named []string
	for _, k := range h.Plan.Redo {
		u, ok := s.xRowUnit(L, g.lines, k.Seq)
		if !ok {
			continue
		}
		rows[u]++
		if tu, torn := g.torn[k.Seq]; torn && tu == u {
			units = append(units, u)
			named = append(named, fmt.Sprintf("seq %d %s: its dispatch file was cut by the crash before its instructions, and it has no manifest line", k.Seq, k.Role))
		}
	}
	for _, k := range h.Plan.Redo {
		l, recorded := g.lines[k.Seq]
		if u, ok := s.xRowUnit(L, g.lines, k.Seq); ok && u == g.gone && recorded && (l.Status == "failed" || l.Status == "error") && k.Seq <= s.missingSeq {
			units = append(units, u)
			named = append(named, fmt.Sprintf("seq %d %s: ended %s, and the dispatch file of seq %d, an attempt at the same work, is gone (no instructions to tell a retry from other work)", k.Seq, k.Role, l.Status, s.missingSeq))
			break
		}
	}
	if why := g.xExplainsUnidentified(s, L, h, redo); why != "" {
		return why
	}
	undone, undoNamed, ok := g.xUndoNamed(s, L, h)
	if !ok {
		return ""
	}
	if len(units) == 0 && len(undone) == 0 {
		if g.placed >= 0 && redo == g.placed {
			if l := g.lines[s.missingSeq]; l.Status == "completed" && !g.xReplayInFlight(s.missingSeq) {
				if c := xNamesCheck(h.Plan.FailedVerifications, s.missingSeq); c != "" {
					return c + " (its dispatch file and header time gone; the manifest lines around it hold a boundary checkpoint, so its work may lie on either side of it)"
				}
				if c := xNamesCheck(h.Plan.FailedVerifications, g.xLatestReplay(s.missingSeq)); c != "" {
					// the latest attempt at the unit is a replay of it: its
					// phase and wave are still the original's, which nothing
					// places (seed 24655)
					return c + fmt.Sprintf(" (a replay of seq %d, whose dispatch file and header time are gone; the manifest lines around seq %d hold a boundary checkpoint, so its work may lie on either side of it)", s.missingSeq, s.missingSeq)
				}
				return ""
			}
			for _, k := range h.Plan.Redo {
				if u, ok := s.xRowUnit(L, g.lines, k.Seq); ok && u == s.fileUnit[s.missingSeq] {
					what := "in flight"
					if g.xReplayInFlight(s.missingSeq) {
						what = "completed and its replay in flight (placed with it)"
					}
					return fmt.Sprintf("seq %d %s: %s, its dispatch file (and header time) gone; the manifest lines around it hold a boundary checkpoint, so it may have started before it", s.missingSeq, k.Role, what)
				}
			}
		}
		return ""
	}
	key := append(slices.Clone(units), undone...)
	if g.undoInert {
		// counting the undone units as not on disk changes no minimum: the
		// redo rests on the other units named
		key = slices.Clone(units)
	}
	min, ok := g.min[xUnitsKey(key)]
	if !ok {
		return ""
	}
	named = append(named, undoNamed...)
	extra := 0
	for _, u := range slices.Compact(sortedInts(units)) {
		extra += rows[u] - 1
	}
	if redo != min+extra {
		// the removed file's failed attempt placed early too: with no header
		// time, the lines around it may put it before a boundary checkpoint
		if xUnitsKey(units) != xUnitsKey([]int{g.gone}) || g.placed < 0 || redo != g.placed+extra {
			return ""
		}
	}
	return strings.Join(named, "; ")
}

// xExplainsKilled explains a redo of exactly the minimum with the units whose
// latest attempt is a replay killed in flight counted as not on disk, when
// the plan lists each of them: a mutating replay with no completion line
// proves nothing of its work (its agent may have committed part of it), even
// if an earlier attempt at it completed, so a resume cannot keep it. It
// names the replays, "" when it does not explain the redo.
func (g *xGoneEvidence) xExplainsKilled(s *XScenario, L xLayout, h handoff, redo int) string {
	if g.minKilled < 0 || redo != g.minKilled {
		return ""
	}
	listed := map[int]bool{}
	for _, k := range h.Plan.Redo {
		if u, ok := s.xRowUnit(L, g.lines, k.Seq); ok {
			listed[u] = true
		}
	}
	var named []string
	for _, u := range sortedInts(slices.Collect(maps.Keys(g.killed))) {
		if !listed[u] {
			return ""
		}
		named = append(named, fmt.Sprintf("seq %d %s: a replay killed in flight (no completion line), so nothing says its work is whole", g.killed[u], s.Units[u].Role))
	}
	return strings.Join(named, "; ")
}

// xExplainsUnidentified explains a redo of exactly the minimum with the
// unit of the file the generator removed counted as not on disk, when the
// plan names that dispatch "which work it was" (kept, but the hand-off cannot
// say which work it did) and the generator confirms it: the dispatch is
// task-less and the scenario has another task-less unit of its role and
// phase, told apart only by the instructions in the file that is gone, so a
// skill continuing from the hand-off cannot tell whether that work is done.
func (g *xGoneEvidence) xExplainsUnidentified(s *XScenario, L xLayout, h handoff, redo int) string {
	f := xNamesCheck(h.Plan.FailedVerifications, s.missingSeq)
	if g.gone < 0 || !strings.Contains(f, ": which work it was failed: ") {
		return ""
	}
	u := &s.Units[g.gone]
	twin := false
	for i := range s.Units {
		v := &s.Units[i]
		twin = twin || (i != u.Index && v.Task == 0 && v.Role == u.Role && v.Phase == u.Phase)
	}
	if min, ok := g.min[xUnitsKey([]int{g.gone})]; !twin || !ok || redo != min {
		return ""
	}
	return f
}

// xUndoNamed returns the units the plan names "kept across the undo", with
// the plan's lines, when the generator confirms each: its latest attempt
// completed after a mutating attempt that never completed had started, both
// at work in one tree, so nothing on disk says its commit holds none of the
// other's work. ok is false when a named unit is no such unit.
func (g *xGoneEvidence) xUndoNamed(s *XScenario, L xLayout, h handoff) (units []int, named []string, ok bool) {
	for _, f := range h.Plan.FailedVerifications {
		var seq int
		if _, err := fmt.Sscanf(f, "seq %d ", &seq); err != nil || !strings.Contains(f, ": kept across the undo failed: ") {
			continue
		}
		u, found := s.xRowUnit(L, g.lines, seq)
		if !found || !g.undoCand[u] {
			return nil, nil, false
		}
		units = append(units, u)
		named = append(named, f)
	}
	return units, named, true
}

// xLatestReplay is the latest replay of seq (the highest seq whose replay_of
// chain leads to seq), 0 when none.
func (g *xGoneEvidence) xLatestReplay(seq int) int {
	latest := 0
	for _, l := range g.lines {
		if g.xReplays(l, seq) {
			latest = max(latest, l.Seq)
		}
	}
	return latest
}

// xReplayInFlight says whether seq's latest attempt is a replay of it (a
// replay_of chain leading to seq) with no completion line.
func (g *xGoneEvidence) xReplayInFlight(seq int) bool {
	for _, l := range g.lines {
		if l.Status == "dispatched" && g.xReplays(l, seq) {
			return true
		}
	}
	return false
}

// xReplays says whether l's replay_of chain leads to seq.
func (g *xGoneEvidence) xReplays(l xLineRec, seq int) bool {
	for at, depth := l, 0; at.ReplayOf != nil && depth < 20; depth++ {
		if *at.ReplayOf == seq {
			return true
		}
		next, ok := g.lines[*at.ReplayOf]
		if !ok {
			return false
		}
		at = next
	}
	return false
}

// xRowUnit is the unit of a plan row's seq: its manifest line's (through its
// replay_of chain), or, with no line, its dispatch file's, else the unit the
// generator wrote that seq's file for.
func (s *XScenario) xRowUnit(L xLayout, lines map[int]xLineRec, seq int) (int, bool) {
	for depth := 0; depth < 20; depth++ {
		l, ok := lines[seq]
		if !ok {
			if u := s.xUnitOfFile(L, seq); u != nil {
				return u.Index, true
			}
			i, made := s.fileUnit[seq]
			return i, made
		}
		if l.ReplayOf != nil {
			seq = *l.ReplayOf
			continue
		}
		if u := s.xUnitOfRecord(L, l, lines); u != nil {
			return u.Index, true
		}
		return 0, false
	}
	return 0, false
}

// xFileHoldsDesc says whether seq's dispatch file still holds u's
// instructions whole (its description line).
func (s *XScenario) xFileHoldsDesc(L xLayout, seq int, u *XUnit) bool {
	for _, dir := range []string{L.dd, filepath.Join(L.scratch, "crucible-dispatch-"+s.Sid)} {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d-%s.md", seq, u.Role)))
		if err == nil && strings.Contains(string(data), "\n"+u.Desc+"\n") {
			return true
		}
	}
	return false
}

// xPlacedEarly is the minimum redo with the dispatch whose file the
// generator removed placed as early as the manifest lines allow, and counted
// as not on disk, when it was in flight, failed or completed at the crash: in the
// group of the latest dispatch that still has
// its file (its header time) and whose first line precedes its own, when that
// group is earlier than its own; -1 otherwise.
func (s *XScenario) xPlacedEarly(L xLayout, sent map[int]bool, lines map[int]xLineRec) int {
	u, ok := s.fileUnit[s.missingSeq]
	if l, recorded := lines[s.missingSeq]; !ok || s.missingSeq == 0 || !recorded || (l.Status != "dispatched" && l.Status != "completed" && l.Status != "failed" && l.Status != "error") {
		return -1
	}
	lower := -1
	seen := map[int]bool{}
	for _, l := range s.xReadAll(L) {
		if seen[l.Seq] {
			continue
		}
		seen[l.Seq] = true
		if l.Seq == s.missingSeq {
			break
		}
		if _, err := os.Stat(filepath.Join(L.dd, filepath.Base(l.File))); err != nil {
			continue
		}
		if v, ok := s.xRowUnit(L, lines, l.Seq); ok {
			lower = v
		}
	}
	if lower < 0 || s.Units[lower].Group >= s.Units[u].Group {
		return -1
	}
	own := s.Units[u].Group
	s.Units[u].Group = s.Units[lower].Group
	n, _ := s.xMinRedo(L, sent, u)
	s.Units[u].Group = own
	return n
}
