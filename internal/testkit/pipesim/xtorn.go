package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// xEvidenceExplains says whether a resume that redid redo items, more than
// the minimum, is explained by dispatch files the generator tore or removed.
// Torn: a planned item
// whose dispatch file a crash cut (s.tornFiles), with no manifest line (its
// agent never started), whose surviving bytes no longer hold its unit's
// instructions whole (the unit's description line), so nothing on disk says
// which work it was, whether a later dispatch of its role and phase did it,
// or whether it is the same work as another item. On those items and nothing
// wider: the redo must be exactly the minimum with those units counted as not
// on disk, plus one item for each further row of the plan those units have
// (a torn file the product cannot join to its unit's other attempt).
// Removed: a task-less planned item that ended failed or error, when the file
// the generator removed is that attempt's or a later attempt's at its unit
// (nothing then proves the later attempt a retry of it), counted the same
// way. It returns what it names, "" when it does not explain the redo.
func (s *XScenario) xEvidenceExplains(L xLayout, h handoff, sent map[int]bool, redo int) string {
	lines := xReadLines(L, s.Sid)
	rows := map[int]int{} // unit -> the plan's rows for it
	var units []int
	var named []string
	for _, k := range h.Plan.Redo {
		u, ok := s.xRowUnit(L, lines, k.Seq)
		if !ok {
			continue
		}
		rows[u]++
		if _, recorded := lines[k.Seq]; recorded || !s.tornFiles[k.Seq] || s.xFileHoldsDesc(L, k.Seq, &s.Units[u]) {
			continue
		}
		units = append(units, u)
		named = append(named, fmt.Sprintf("seq %d %s: its dispatch file was cut by the crash before its instructions, and it has no manifest line", k.Seq, k.Role))
	}
	// the dispatch file the generator removed, when it is an attempt at the
	// unit of a failed attempt the plan redoes (that attempt's own, or its
	// retry's): a task-less failure is superseded only by the same
	// instructions, and one side of that comparison is gone
	if gone, ok := s.fileUnit[s.missingSeq]; ok && s.missingSeq != 0 {
		for _, k := range h.Plan.Redo {
			l, recorded := lines[k.Seq]
			if u, ok := s.xRowUnit(L, lines, k.Seq); ok && u == gone && recorded && (l.Status == "failed" || l.Status == "error") && k.Seq <= s.missingSeq && s.Units[u].Task == 0 {
				units = append(units, u)
				named = append(named, fmt.Sprintf("seq %d %s: ended %s, and the dispatch file of seq %d, an attempt at the same work, is gone (no instructions to tell a retry from other work)", k.Seq, k.Role, l.Status, s.missingSeq))
				break
			}
		}
	}
	if len(units) == 0 {
		return ""
	}
	min, _ := s.xMinRedo(L, sent, units...)
	extra := 0
	seen := map[int]bool{}
	for _, u := range units {
		if !seen[u] {
			seen[u] = true
			extra += rows[u] - 1
		}
	}
	if redo != min+extra {
		return ""
	}
	return strings.Join(named, "; ")
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
