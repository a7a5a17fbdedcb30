package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestXMinRedoKnowsAGoneTasklessFile: an audit run's parallel scanners are
// task-less dispatches of one role and phase told apart only by their dispatch
// files' instructions. With every event applied (nothing in flight, every
// output whole) and one scanner's dispatch file gone, the minimum a resume must
// redo is 0: that scanner completed and its output is on disk. The line no
// longer says which unit it was, but the generator wrote the file and knows;
// reading the disk alone counted the unit as dispatched and never recorded
// (minimum 1), so the simulator flagged an exact resume as
// precision/redo-below-minimum (seeds 2728, 2824, 2944 and 12 more of
// 2501-4500).
func TestXMinRedoKnowsAGoneTasklessFile(t *testing.T) {
	const seed = 2728
	s := NewXScenario(seed)
	if s.Skill != "audit" {
		t.Fatalf("seed %d is a %s run, want an audit run", seed, s.Skill)
	}
	L := newXLayout(filepath.Join(t.TempDir(), "run"), s.Sid)
	events, err := s.xSetup(L)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[int]bool{}
	s.fileUnit = map[int]int{}
	scanner := 0
	for _, e := range events {
		if err := s.xApply(L, e, 0); err != nil {
			t.Fatal(err)
		}
		if e.kind == xFile {
			sent[e.u.Index] = true
			s.fileUnit[e.seq] = e.u.Index
			if e.u.Role == "scanner" && scanner == 0 {
				scanner = e.seq
			}
		}
	}
	if got, _ := s.xMinRedo(L, sent); got != 0 {
		t.Fatalf("every unit complete and on disk: minimum %d, want 0", got)
	}
	if err := os.Remove(filepath.Join(L.dd, fmt.Sprintf("%d-scanner.md", scanner))); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.xMinRedo(L, sent); got != 0 {
		t.Errorf("scanner seq %d's dispatch file gone: minimum %d, want 0 (its line and output still prove it)", scanner, got)
	}
	// the other side: its output gone too, the scanner's work is not on disk
	if err := os.Remove(filepath.Join(L.dd, fmt.Sprintf("%d-scanner-output.md", scanner))); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.xMinRedo(L, sent); got == 0 {
		t.Errorf("scanner seq %d's file and output gone: minimum 0, want its work redone", scanner)
	}
}

// TestXEvidenceExplainsOnlyTheTornFile: a dispatch file a crash cut before its
// instructions, with no manifest line, says nothing of which work it was, so
// a resume that cannot join it to its unit's other attempt (one row more for
// that unit) redoes more than the minimum, explained on that file and
// nothing wider: one row more is explained, two are not, and neither is a
// file the crash left whole.
func TestXEvidenceExplainsOnlyTheTornFile(t *testing.T) {
	const seed = 18
	s := NewXScenario(seed)
	L := newXLayout(filepath.Join(t.TempDir(), "run"), s.Sid)
	events, err := s.xSetup(L)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[int]bool{}
	s.fileUnit, s.tornFiles = map[int]int{}, map[int]bool{}
	var gate xev
	for _, e := range events {
		if e.kind == xFile && e.u.Role == "quality-gate" {
			gate = e
			break
		}
		if err := s.xApply(L, e, 0); err != nil {
			t.Fatal(err)
		}
		if e.kind == xFile {
			sent[e.u.Index] = true
			s.fileUnit[e.seq] = e.u.Index
		}
	}
	if gate.u == nil {
		t.Fatalf("seed %d has no quality gate", seed)
	}
	// the gate's file written whole with no line, then again on the next
	// seq, cut by a crash
	again := gate
	again.seq = gate.seq + 1
	if err := s.xApply(L, gate, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.xApply(L, again, 0.3); err != nil {
		t.Fatal(err)
	}
	sent[gate.u.Index] = true
	s.fileUnit[gate.seq], s.fileUnit[again.seq] = gate.u.Index, gate.u.Index
	if got, _ := s.xMinRedo(L, sent); got != 1 {
		t.Fatalf("the gate never started: minimum %d, want 1", got)
	}
	var h handoff
	h.Plan.Redo = append(h.Plan.Redo, struct {
		Seq  int    `json:"seq"`
		Role string `json:"role"`
	}{gate.seq, "quality-gate"}, struct {
		Seq  int    `json:"seq"`
		Role string `json:"role"`
	}{again.seq, "quality-gate"})
	if got := s.xGone(L, sent, -1).xExplains(s, L, h, 2); got != "" {
		t.Errorf("no file torn as far as the generator knows, explained: %s", got)
	}
	s.tornFiles[again.seq] = true
	if got := s.xGone(L, sent, -1).xExplains(s, L, h, 2); got == "" {
		t.Errorf("seq %d torn: two rows for one unit not explained", again.seq)
	}
	if got := s.xGone(L, sent, -1).xExplains(s, L, h, 3); got != "" {
		t.Errorf("three items redone, explained wider than the torn file: %s", got)
	}
	s.tornFiles = map[int]bool{gate.seq: true} // whole, though the generator had marked it
	if got := s.xGone(L, sent, -1).xExplains(s, L, h, 2); got != "" {
		t.Errorf("a whole file explained: %s", got)
	}
}

// TestXExplainsAnUnidentifiedKeptScannerOnlyOnIt: an audit's task-less
// scanner completed and its dispatch file was removed; it is kept, but beside
// its twin nothing tells the skill which scan it was, so the continuation
// scans again: one item more than the minimum, explained when the plan names
// that dispatch "which work it was", and nothing wider (two items more, or a
// plan naming another seq, are not).
func TestXExplainsAnUnidentifiedKeptScannerOnlyOnIt(t *testing.T) {
	const seed = 3636
	s := NewXScenario(seed)
	L := newXLayout(filepath.Join(t.TempDir(), "run"), s.Sid)
	events, err := s.xSetup(L)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[int]bool{}
	s.fileUnit, s.tornFiles = map[int]int{}, map[int]bool{}
	var scanner xev
	for _, e := range events {
		if e.u != nil && e.u.Group > 1 {
			break
		}
		if err := s.xApply(L, e, 0); err != nil {
			t.Fatal(err)
		}
		if e.kind == xFile {
			sent[e.u.Index] = true
			s.fileUnit[e.seq] = e.u.Index
			if e.u.Role == "scanner" {
				scanner = e
			}
		}
	}
	if scanner.u == nil || scanner.u.Task != 0 {
		t.Fatalf("seed %d has no task-less scanner", seed)
	}
	if err := os.Remove(filepath.Join(L.dd, fmt.Sprintf("%d-scanner.md", scanner.seq))); err != nil {
		t.Fatal(err)
	}
	s.missingSeq = scanner.seq
	if got, _ := s.xMinRedo(L, sent); got != 0 {
		t.Fatalf("every scan done: minimum %d, want 0", got)
	}
	named := func(seq int) handoff {
		var h handoff
		h.Plan.FailedVerifications = []string{fmt.Sprintf("seq %d scanner: which work it was failed: its dispatch file is gone and it has no task", seq)}
		return h
	}
	g := s.xGone(L, sent, -1)
	if got := g.xExplains(s, L, named(scanner.seq), 1); got == "" {
		t.Errorf("seq %d named: one scan more not explained", scanner.seq)
	}
	if got := g.xExplains(s, L, named(scanner.seq), 2); got != "" {
		t.Errorf("two items more explained: %s", got)
	}
	if got := g.xExplains(s, L, named(scanner.seq+100), 1); got != "" {
		t.Errorf("another seq named, explained: %s", got)
	}
	if got := g.xExplains(s, L, handoff{}, 1); got != "" {
		t.Errorf("nothing named, explained: %s", got)
	}
}

// TestXMinRedoIgnoresAnotherSessionsPartialFile: with two live sessions in
// one scratch dir, the other session's unit in flight leaves its partial file
// in its own work dir (fixes/); that is the other session's work to resume,
// not work this run left unfinished. With every event of this run applied
// (nothing in flight, every output whole) the minimum stays 0 with such a
// file in the tree; counting it, the generator required this run to go back
// to a boundary and flagged exact resumes as precision/redo-below-minimum
// (seeds 1014, 1230, 1926, 3230, 3705, 4786, 5366, 6204 of 1-8000). A partial
// file of one of this run's units still counts.
func TestXMinRedoIgnoresAnotherSessionsPartialFile(t *testing.T) {
	const seed = 2728
	s := NewXScenario(seed)
	L := newXLayout(filepath.Join(t.TempDir(), "run"), s.Sid)
	events, err := s.xSetup(L)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[int]bool{}
	s.fileUnit = map[int]int{}
	for _, e := range events {
		if err := s.xApply(L, e, 0); err != nil {
			t.Fatal(err)
		}
		if e.kind == xFile {
			sent[e.u.Index] = true
			s.fileUnit[e.seq] = e.u.Index
		}
	}
	other := filepath.Join(L.project, xSecondDir, "g02-fix1.partial")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("partial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.xMinRedo(L, sent); got != 0 {
		t.Errorf("every unit of this run complete and on disk, another session's partial file in the tree: minimum %d, want 0", got)
	}
	u := &s.Units[len(s.Units)-1]
	own := filepath.Join(L.project, u.workDir(), u.ID+".partial")
	if err := os.WriteFile(own, []byte("partial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.xMinRedo(L, sent); got == 0 {
		t.Errorf("a partial file of this run's unit %s in the tree: minimum 0, want work redone", u.ID)
	}
}

// TestXUndoCandidateAfterAFailedAttempt: two fixers at work in one tree; the
// first ends failed and is its task's latest attempt, the second completes
// (commits) after the first started. A resume that restores nothing undoes
// what the failed attempt left (the product treats an attempt that ended
// failed as one that never completed), and the second's commit may hold some
// of it, so the plan names it "kept across the undo": the generator confirms
// that on the second fixer (seed 11571 of 8001-14000), and no longer once a
// retry of the failed task has a line (then nothing is undone), nor on a
// redo wider than the minimum with that unit counted as not on disk. The run
// has no checkpoint (a restore would redo the second fixer anyway).
func TestXUndoCandidateAfterAFailedAttempt(t *testing.T) {
	const seed = 11571
	for _, retried := range []bool{false, true} {
		s := NewXScenario(seed)
		L := newXLayout(filepath.Join(t.TempDir(), "run"), s.Sid)
		events, err := s.xSetup(L)
		if err != nil {
			t.Fatal(err)
		}
		sent := map[int]bool{}
		s.fileUnit, s.tornFiles = map[int]int{}, map[int]bool{}
		// a: a mutating unit; b: another of its group whose first attempt
		// completes
		var a, b *XUnit
		firstFail := map[*XUnit]bool{}
		for _, e := range events {
			if _, seen := firstFail[e.u]; e.kind == xAfter && e.u.Class == Mutating && !seen {
				firstFail[e.u] = e.fail
			}
		}
		for i := range s.Units {
			u := &s.Units[i]
			if fail, ok := firstFail[u]; !ok || fail {
				continue
			}
			for j := range s.Units {
				if v := &s.Units[j]; j != i && v.Class == Mutating && v.Group == u.Group && a == nil {
					a, b = v, u
				}
			}
		}
		apply := func(e xev) {
			t.Helper()
			if err := s.xApply(L, e, 0); err != nil {
				t.Fatal(err)
			}
			if e.kind == xFile {
				sent[e.u.Index] = true
				s.fileUnit[e.seq] = e.u.Index
			}
		}
		var aSeq, bSeq int
		var aAfter xev
		var bEvents []xev
		for _, e := range events {
			switch {
			case e.kind == xCkpt || e.kind == xRow:
				// no checkpoint: nothing restores the tree, the resume
				// undoes the failed attempt's work instead
			case e.u == nil || e.u.Group < a.Group:
				apply(e)
			case e.u == a && aSeq == 0 && e.kind == xFile:
				aSeq = e.seq
				apply(e)
			case e.u == a && e.seq == aSeq && e.kind == xBefore:
				apply(e)
			case e.u == a && e.seq == aSeq && e.kind == xAfter:
				aAfter = e
			case e.u == b && (bSeq == 0 || e.seq == bSeq):
				bSeq = e.seq
				bEvents = append(bEvents, e)
			}
		}
		if aSeq == 0 || bSeq == 0 || aAfter.u == nil {
			t.Fatalf("seed %d: no attempts at %s and %s", seed, a.ID, b.ID)
		}
		for _, e := range bEvents {
			if e.kind != xCkpt && e.kind != xRow && e.kind != xMarker {
				apply(e)
			}
		}
		aAfter.fail = true
		apply(aAfter)
		if retried {
			next := xev{kind: xFile, u: a, seq: max(aSeq, bSeq) + 1, start: aAfter.at, at: aAfter.at}
			apply(next)
			next.kind = xBefore
			apply(next)
		}
		g := s.xGone(L, sent, -1)
		if g.undoCand[b.Index] == retried {
			t.Fatalf("retried %v: %s (seq %d) completed after failed seq %d started: undo candidate %v", retried, b.ID, bSeq, aSeq, g.undoCand[b.Index])
		}
		if retried {
			continue
		}
		var h handoff
		h.Plan.FailedVerifications = []string{fmt.Sprintf("seq %d %s: kept across the undo failed: its commit was made after seq %d (%s), which never completed, started in the same tree", bSeq, b.Role, aSeq, a.Role)}
		base, _ := s.xMinRedo(L, sent)
		min, ok := g.min[xUnitsKey([]int{b.Index})]
		if !ok || min <= base {
			t.Fatalf("%s counted as not on disk: minimum %d (%v), want more than %d", b.ID, min, ok, base)
		}
		if got := g.xExplains(s, L, h, min); got == "" {
			t.Errorf("seq %d named kept across the undo of failed seq %d: a redo of %d not explained", bSeq, aSeq, min)
		}
		if got := g.xExplains(s, L, h, min+1); got != "" {
			t.Errorf("a redo wider than the unit named explained: %s", got)
		}
		h.Plan.FailedVerifications[0] = strings.Replace(h.Plan.FailedVerifications[0], fmt.Sprintf("seq %d ", bSeq), fmt.Sprintf("seq %d ", aSeq), 1)
		if got := g.xExplains(s, L, h, min); got != "" {
			t.Errorf("the failed attempt itself named kept across the undo, explained: %s", got)
		}
	}
}
