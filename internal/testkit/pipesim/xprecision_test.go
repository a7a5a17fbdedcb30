package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
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
