package pipesim

// Shapes of issue 36 that the first generator did not make, drawn from a
// stream of their own (so the older shapes of a seed stay what they were):
//
//   - state files: the build-mode file at the run's start, and at every phase
//     boundary the handoff manifest into the next phase and the Compression
//     State section of pipeline-status.md, as the skill writes them (a resume
//     reads them for its hand-off; they must never change its decision);
//   - a branch mismatch: after the crash the user is on another branch of the
//     project when the resume runs; the branch guard must refuse and change
//     nothing, and the resume goes on once the user is back on the run's
//     branch (xBranchMismatch).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// XExtra is a seed's draw of the shapes in this file.
type XExtra struct {
	StateFiles     bool `json:"state_files,omitempty"`
	BranchMismatch bool `json:"branch_mismatch,omitempty"`
	// MissingFile removes a dispatch file after the crash: a re-dispatch of
	// it must rebuild it from its template (the skill's template folder the
	// resume is given).
	MissingFile bool `json:"missing_file,omitempty"`
	// TwoSessions adds a second live session of the project (xsessions.go).
	TwoSessions bool `json:"two_sessions,omitempty"`
}

// xExtra draws seed's extra shapes from a stream of their own (and the second
// session from one of its own, so the other draws stay what they were).
func xExtra(seed int64) XExtra {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5747e))
	x := XExtra{StateFiles: r.IntN(3) == 0, BranchMismatch: r.IntN(12) == 0, MissingFile: r.IntN(8) == 0}
	x.TwoSessions = rand.New(rand.NewPCG(uint64(seed), 0x2c0de5)).IntN(xTwoSessionsEvery) == 0
	return x
}

// XShapeFrequencies counts, over n seeds from first, the shapes the scenario
// generator decides before the run (the crash points and what the resumes
// meet are counted by the end-to-end test): bench/sim.sh prints them.
func XShapeFrequencies(first int64, n int) map[string]int {
	out := map[string]int{}
	for seed := first; seed < first+int64(n); seed++ {
		s := NewXScenario(seed)
		for _, sh := range s.Shapes {
			out[sh]++
		}
	}
	return out
}

// FormatShapeFrequencies renders counts as "name count (percent)" lines, by name.
func FormatShapeFrequencies(counts map[string]int, n int) string {
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "%-32s %6d  %5.1f%%\n", k, counts[k], 100*float64(counts[k])/float64(max(n, 1)))
	}
	return b.String()
}

// xStateAt writes the state files the skill writes at event e: the build-mode
// file at the start (the marker event), and at a checkpoint that opens a phase
// the handoff manifest into it and pipeline-status.md's Compression State.
func (s *XScenario) xStateAt(L xLayout, e xev) error {
	if !s.Extra.StateFiles {
		return nil
	}
	switch e.kind {
	case xMarker:
		if s.Skill != "build" {
			return nil
		}
		return xWriteFile(filepath.Join(L.tmp, "crucible-build-mode.md"),
			[]byte(fmt.Sprintf("# Build mode\n\nmode: feature\nbaseline: %s\n", xHeadHash(L.project))), 0o644)
	case xCkpt:
		gi := s.GroupStart(e.reason)
		if gi <= 0 || len(s.Groups[gi].Units) == 0 {
			return nil
		}
		prev := s.Units[s.Groups[gi-1].Units[0]].Phase
		next := s.Units[s.Groups[gi].Units[0]].Phase
		if prev == next {
			return nil // a wave or gate inside a phase: no handoff
		}
		var done []string
		for _, g := range s.Groups[:gi] {
			for _, ui := range g.Units {
				done = append(done, "- "+s.Units[ui].ID+" done")
			}
		}
		handoff := fmt.Sprintf("# Handoff: Phase %s to Phase %s\n\n**Goal:** %s\n**Mode:** feature\n\n## Inputs for Phase %s\n%s\n\n## Decisions Carried Forward\n- keep the public API unchanged\n\n## Active Constraints\n- branch %s only\n",
			prev, next, s.xGoal(), next, strings.Join(done, "\n"), s.Branch)
		if err := xWriteFile(filepath.Join(L.scratch, fmt.Sprintf("handoff-%s-to-%s.md", prev, next)), []byte(handoff), 0o644); err != nil {
			return err
		}
		status := fmt.Sprintf("# Pipeline status\n\nUpdated %s.\n\n## Compression State\n**Goal:** %s\n**Key Decisions:**\n- keep the public API unchanged\n**Active Constraints:**\n- branch %s only\n**Next Steps:**\n1. start phase %s\n",
			e.at.Format(time.RFC3339), s.xGoal(), s.Branch, next)
		return xWriteFile(filepath.Join(L.scratch, "pipeline-status.md"), []byte(status), 0o644)
	}
	return nil
}

func (s *XScenario) xGoal() string {
	return fmt.Sprintf("%s run %s on %s", s.Skill, s.Sid, s.Branch)
}

// xBeforeResume makes the extra shapes that meet the first resume: a
// dispatch file gone, then the user on another branch.
func (s *XScenario) xBeforeResume(L xLayout, opt XOptions, ctl string, now time.Time) []XFinding {
	var out []XFinding
	if err := s.xWriteTemplates(L); err != nil {
		return append(out, XFinding{Check: "setup", Class: "templates", Detail: err.Error()})
	}
	if s.Extra.MissingFile {
		rr := rand.New(rand.NewPCG(uint64(s.Seed), 0x90e))
		var files []string
		ents, _ := os.ReadDir(L.dd)
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".md") && !strings.HasSuffix(n, "-output.md") && n[0] >= '0' && n[0] <= '9' {
				files = append(files, n)
			}
		}
		sort.Strings(files)
		if len(files) > 0 {
			name := files[rr.IntN(len(files))]
			if os.Remove(filepath.Join(L.dd, name)) == nil {
				s.shape("dispatch-file-missing")
				fmt.Sscanf(name, "%d-", &s.missingSeq)
			}
		}
	}
	if f := s.xBranchMismatch(L, opt, ctl, now); f != nil {
		out = append(out, *f)
	}
	return out
}

// xTemplatesDir is the skill's template folder of the run at L.
func xTemplatesDir(L xLayout) string { return filepath.Join(L.root, "templates") }

// xWriteTemplates writes a prompt template for every role of the scenario
// (<role>-prompt.md, as the skill's templates are named), the folder a resume
// rebuilds a dispatch file that is gone from.
func (s *XScenario) xWriteTemplates(L xLayout) error {
	dir := xTemplatesDir(L)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	written := map[string]bool{} // units share roles: each role's file once
	for _, u := range s.Units {
		if written[u.Role] {
			continue
		}
		written[u.Role] = true
		text := fmt.Sprintf("You are the %s of a %s pipeline. Do the work of the task and the phase this dispatch names.\n", u.Role, s.Skill)
		if err := xWriteFile(filepath.Join(dir, u.Role+"-prompt.md"), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// xBranchMismatch is the user on another branch when the resume runs (drawn
// by Extra.BranchMismatch): the project's HEAD moves to a new branch at the
// same commit, the resume runs as the skill would run it, and it must write
// nothing anywhere: refuse (the branch guard, exit 3, naming the run's
// branch), or find nothing to do; the user then goes back to the run's
// branch. Nil when the seed draws no mismatch or the
// guard held.
func (s *XScenario) xBranchMismatch(L xLayout, opt XOptions, ctl string, now time.Time) *XFinding {
	if !s.Extra.BranchMismatch {
		return nil
	}
	head := filepath.Join(L.project, ".git", "HEAD")
	hash := xHeadHash(L.project)
	if hash == "" {
		return nil
	}
	other := filepath.Join(L.project, ".git", "refs", "heads", "wip", "user-notes")
	if os.MkdirAll(filepath.Dir(other), 0o755) != nil || xWriteFile(other, []byte(hash+"\n"), 0o644) != nil {
		return nil
	}
	if xWriteFile(head, []byte("ref: refs/heads/wip/user-notes\n"), 0o644) != nil {
		return nil
	}
	before := xDigest(L.root)
	out := opt.Replay(XCall{Dir: L.project, PidFile: filepath.Join(ctl, "replay.pid"),
		Env:  []string{"HOME=" + L.home, "TMPDIR=" + L.tmp, "SIMAGENT_CTL=" + ctl},
		Args: []string{"--yes", "--json", "--agent", opt.Agent, "--templates", xTemplatesDir(L), "--now", now.Format(time.RFC3339)},
		Home: L.home, Tmp: L.tmp, Now: now, Scenario: s})
	after := xDigest(L.root)
	// the user goes back to the run's branch; the wip branch stays, as a
	// user's branch would
	back := xWriteFile(head, []byte("ref: refs/heads/"+s.Branch+"\n"), 0o644)
	switch {
	case back != nil:
		return &XFinding{Check: "setup", Class: "branch-back", Detail: back.Error()}
	case before != after:
		return &XFinding{Check: "resume", Class: "branch-mismatch-wrote", Detail: fmt.Sprintf("exit %d on branch wip/user-notes (the run's is %s), and it changed %s", out.Code, s.Branch, xDigestDiff(before, after))}
	case out.Code != 3 && out.Code != 0:
		return &XFinding{Check: "resume", Class: "branch-mismatch-not-refused", Detail: fmt.Sprintf("exit %d on branch wip/user-notes, the run's is %s: %s", out.Code, s.Branch, xLastLine(out.Stderr))}
	case out.Code == 3 && !strings.Contains(out.Stderr, s.Branch):
		return &XFinding{Check: "resume", Class: "branch-mismatch-refusal-unnamed", Detail: fmt.Sprintf("the refusal does not name the run's branch %s: %s", s.Branch, xLastLine(out.Stderr))}
	}
	// exit 0 with nothing written: a resume with nothing to restore or
	// re-dispatch needs no guard
	return nil
}

// xDigest lists every regular file under root with its size and content hash
// (one line each, by path).
func xDigest(root string) string {
	var lines []string
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, "ctl") {
			return nil // the driver's own control files
		}
		data, err := xReadFile(p)
		if err != nil {
			return nil
		}
		lines = append(lines, fmt.Sprintf("%s %d %x", rel, len(data), xSum(data)))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func xSum(data []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range data {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// xDigestDiff names the first path two digests disagree on.
func xDigestDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	set := map[string]bool{}
	for _, l := range x {
		set[l] = true
	}
	for _, l := range y {
		if !set[l] {
			return strings.SplitN(l, " ", 2)[0]
		}
	}
	for _, l := range x {
		found := false
		for _, m := range y {
			if m == l {
				found = true
				break
			}
		}
		if !found {
			return strings.SplitN(l, " ", 2)[0] + " (gone)"
		}
	}
	return "?"
}

// xMissingEvidence is the dispatch whose evidence the generator removed (its
// dispatch file, so its header time and commit window: 0 when none) and the
// fewest work items a resume must redo when its unit counts as not on disk.
func (s *XScenario) xMissingEvidence(L xLayout, sent map[int]bool) (seq, minRedo int) {
	if s.missingSeq == 0 {
		return 0, -1
	}
	latest := s.xReadLines(L)
	for _, l := range s.xReadAll(L) {
		if l.Seq == s.missingSeq {
			if u := s.xUnitOfRecord(L, l, latest); u != nil {
				min, _ := s.xMinRedo(L, sent, u.Index)
				return l.Seq, min
			}
		}
	}
	return 0, -1
}

// xNamesCheck returns the failed verification that names seq (the plan's
// "seq N role: ..." lines), "" when none does.
func xNamesCheck(failed []string, seq int) string {
	if seq == 0 {
		return ""
	}
	prefix := fmt.Sprintf("seq %d ", seq)
	for _, f := range failed {
		if strings.HasPrefix(f, prefix) {
			return f
		}
	}
	return ""
}

// xAmbiguousRebuildRefused says whether stderr is a resume's refusal to
// rebuild the dispatch whose file the generator removed because nothing
// tells which work it was, and the generator confirms it: that dispatch is
// task-less and the scenario has another task-less unit of its role and
// phase, told apart only by the instructions in the file that is gone (no
// state file the generator writes names them).
func (s *XScenario) xAmbiguousRebuildRefused(L xLayout, stderr string) bool {
	var seq int
	i := strings.Index(stderr, "cannot tell which work seq ")
	if s.missingSeq == 0 || i < 0 {
		return false
	}
	if _, err := fmt.Sscanf(stderr[i+len("cannot tell which work seq "):], "%d", &seq); err != nil || seq != s.missingSeq {
		return false
	}
	for _, l := range s.xReadAll(L) {
		if l.Seq != seq || l.Task != 0 {
			continue
		}
		n := 0
		for _, u := range s.Units {
			if u.Role == l.Role && u.Phase == l.Phase && u.Task == 0 {
				n++
			}
		}
		return n > 1
	}
	return false
}
