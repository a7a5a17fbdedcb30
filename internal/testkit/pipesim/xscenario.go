package pipesim

// Executable simulated pipelines (issue 36): a seed makes a scenario of
// events (orchestrator steps, dispatches written with dispatch.py's
// bookkeeping, deterministic agents that commit or write outputs, checkpoints
// as the checkpoint skill takes them). Running every event gives the
// reference, the uncrashed run's final tree and history; cutting the events
// at any instant gives a crashed run for the real resume. The oracle
// (xoracle.go) compares end states only, so nothing here copies a decision
// rule of the product.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"
)

// XUnit is one unit of the scenario's work: one dispatch of the script, with
// however many attempts it takes.
type XUnit struct {
	Index int    `json:"index"`
	ID    string `json:"id"` // file stem of its work: g03-t7, g01-plan
	Role  string `json:"role"`
	Phase string `json:"phase"`
	Task  int    `json:"task,omitempty"`
	Class Class  `json:"class"`
	Group int    `json:"group"`
	Desc  string `json:"desc"`
	Tier  string `json:"tier"`
	// Fails is how many attempts fail (leaving a partial file) before one
	// completes, in the uncrashed run.
	Fails int `json:"fails,omitempty"`
	// Dir is the project directory its work file goes to, "" units/ (a
	// second session's units write beside, so that neither session's work
	// is the other's base).
	Dir string `json:"dir,omitempty"`
}

// workDir is the project directory of u's work files.
func (u *XUnit) workDir() string {
	if u.Dir != "" {
		return u.Dir
	}
	return "units"
}

// XGroup is a checkpoint (Reason, "" none) and the units dispatched together
// after it.
type XGroup struct {
	Reason string `json:"reason,omitempty"`
	Units  []int  `json:"units"`
}

// XScenario is one seed's pipeline as its orchestrator drives it.
type XScenario struct {
	Seed   int64     `json:"seed"`
	Skill  string    `json:"skill"`
	Sid    string    `json:"sid"`
	Branch string    `json:"branch"`
	Start  time.Time `json:"start"`
	Units  []XUnit   `json:"units"`
	Groups []XGroup  `json:"groups"`
	// Older is an earlier, finished run of the project on the same branch.
	Older *XScenario `json:"older,omitempty"`
	// Shapes made on this seed (counted by bench/sim.sh).
	Shapes []string `json:"shapes,omitempty"`
	// Extra is the draw of the shapes of xstate.go.
	Extra XExtra `json:"extra"`
	// Second is another live session of the project overlapping this run in
	// time (a /debugging run, xsessions.go), nil none.
	Second *XScenario `json:"second,omitempty"`
	// second marks a second session: its start writes its
	// .dispatch-active-<sid> only (.pipeline-active names the first).
	second bool
	// missingSeq is the dispatch whose file the generator removed, 0 none.
	missingSeq int
	// fileUnit maps the seq of every dispatch file the generator wrote (torn,
	// removed or whole) to its unit's index: what it knows of a line whose
	// file no longer tells (the precision's evidence, xUnitOfRecord).
	fileUnit map[int]int
	// lineCache keeps the parse of the manifest lines read (xReadAll).
	lineCache *xLineCache
	// frozen, while set, keeps what xMinRedo reads of each layout's disk
	// (by dispatch dir): the precision stage reads it many times while
	// nothing writes it. Nil elsewhere: every call reads the disk.
	frozen map[string]*xFrozen
	// tornFiles are the seqs of the dispatch files a crash cut (xGone).
	tornFiles map[int]bool
}

// NewXScenario makes seed's scenario: a /build run (design, plan, waves of
// implementers and reviewers, code review and gate). One seed in 25 is wider
// and longer than 6 x 45 (up to 9 waves of up to 8 implementers).
func NewXScenario(seed int64) *XScenario {
	r := rand.New(rand.NewPCG(uint64(seed), 0x36c0ffee))
	zone := time.FixedZone("", pick(r, zones)*60)
	start := time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(28), 7+r.IntN(12), r.IntN(60), r.IntN(60), 0, zone)
	branch := pick(r, []string{"feat/billing", "fix/refund-currency", "chore/hardening", "feat/exports"})
	s := newXScenario(seed, r, start, branch)
	s.Extra = xExtra(seed)
	if s.Extra.StateFiles {
		s.shape("state-files")
	}
	if s.Extra.BranchMismatch {
		s.shape("branch-mismatch")
	}
	if s.Extra.MissingFile {
		s.shape("dispatch-file-missing")
	}
	if r.IntN(5) == 0 {
		// an older run of the project on the same branch, finished days
		// before: its checkpoints (same reasons) and dispatch dir stay
		older := newXScenario(seed, rand.New(rand.NewPCG(uint64(seed), 0x01de7)), start.Add(-time.Duration(2+r.IntN(4))*24*time.Hour), branch)
		for i := range older.Units {
			older.Units[i].ID = strings.Replace(older.Units[i].ID, "-", "-old-", 1)
			older.Units[i].Fails = 0
		}
		s.Older = older
		s.shape("older-run-same-branch")
	}
	if s.Extra.TwoSessions {
		s.Second = s.newXSecondSession()
		s.shape("two-live-sessions")
	}
	return s
}

func newXScenario(seed int64, r *rand.Rand, start time.Time, branch string) *XScenario {
	s := &XScenario{Seed: seed, Skill: "build", Sid: fmt.Sprint(start.Unix()), Start: start, Branch: branch, lineCache: &xLineCache{}}
	g := 0
	add := func(reason string, units ...XUnit) {
		g++
		grp := XGroup{Reason: reason}
		for _, u := range units {
			u.Index, u.Group = len(s.Units), g
			if u.Tier == "" {
				u.Tier = pick(r, tiers)
			}
			if u.Class != Conversation && r.IntN(12) == 0 {
				u.Fails = 1
				s.shape("failed-attempt-retried")
			}
			s.Units = append(s.Units, u)
			grp.Units = append(grp.Units, u.Index)
		}
		s.Groups = append(s.Groups, grp)
	}
	if r.IntN(4) == 0 {
		s.audit(r, add)
		return s.finish()
	}
	add("", XUnit{ID: "innovate", Role: "innovate", Phase: "1", Class: Output, Desc: "Propose designs for the billing service."})
	add("pre-design-gate", XUnit{ID: "plan", Role: "plan-writer", Phase: "2", Class: Mutating, Desc: "Write the implementation plan."})
	add("pre-plan-gate", XUnit{ID: "plan-review", Role: "plan-reviewer", Phase: "2", Class: Output, Desc: "Review the plan."})
	waves, width := 1+r.IntN(3), 6
	if r.IntN(25) == 0 {
		waves, width = 7+r.IntN(3), 8
		s.shape("wider-longer-than-6x45")
	}
	task := 0
	texts := r.Perm(len(taskTexts))
	for w := 1; w <= waves; w++ {
		n := 1 + r.IntN(width)
		var impl, rev []XUnit
		for i := 0; i < n; i++ {
			task++
			text := taskTexts[texts[(task-1)%len(texts)]]
			impl = append(impl, XUnit{ID: fmt.Sprintf("t%d", task), Role: "build-implementer", Phase: "3", Task: task, Class: Mutating,
				Desc: fmt.Sprintf("Task %d: Implement the %s.", task, text)})
			rev = append(rev, XUnit{ID: fmt.Sprintf("r%d", task), Role: "build-reviewer", Phase: "3", Task: task, Class: Output,
				Desc: fmt.Sprintf("Review task %d (%s).", task, text)})
		}
		add(fmt.Sprintf("pre-wave-%d", w), impl...)
		if r.IntN(3) > 0 {
			add("", rev...)
		}
	}
	add("pre-code-review", XUnit{ID: "code-review", Role: "code-reviewer", Phase: "4", Class: Output, Desc: "Review the whole change."})
	add("pre-impl-gate", XUnit{ID: "gate", Role: "quality-gate", Phase: "4", Class: Conversation, Desc: "Quality gate round 1 on the implementation."})
	return s.finish()
}

func (s *XScenario) finish() *XScenario {
	for i := range s.Units {
		s.Units[i].ID = fmt.Sprintf("g%02d-%s", s.Units[i].Group, s.Units[i].ID)
	}
	return s
}

// audit is a skill replay has no profile for: phases named by words, parallel
// task-less scanners of the same role and phase that differ only in their
// instructions, fixers that commit, a report.
func (s *XScenario) audit(r *rand.Rand, add func(string, ...XUnit)) {
	s.Skill = "audit"
	s.shape("phases-named-by-words")
	areas := []string{"billing", "auth", "exports", "webhooks", "ledger", "search"}
	var scans []XUnit
	for _, i := range r.Perm(len(areas))[:2+r.IntN(3)] {
		scans = append(scans, XUnit{ID: "scan-" + areas[i], Role: "scanner", Phase: "scan", Class: Output,
			Desc: fmt.Sprintf("Scan the %s package for injection and authorization bugs.", areas[i])})
	}
	s.shape("task-less-parallel-same-role")
	add("", scans...)
	add("pre-triage", XUnit{ID: "triage", Role: "triager", Phase: "triage", Class: Output, Desc: "Triage the scanners' findings."})
	var fixes []XUnit
	for t := 1; t <= 1+r.IntN(4); t++ {
		text := taskTexts[r.IntN(len(taskTexts))]
		fixes = append(fixes, XUnit{ID: fmt.Sprintf("fix%d", t), Role: "fixer", Phase: "fix", Task: t, Class: Mutating,
			Desc: fmt.Sprintf("Task %d: Fix the findings in the %s.", t, text)})
	}
	add("pre-fix", fixes...)
	add("pre-report", XUnit{ID: "report", Role: "reporter", Phase: "report", Class: Output, Desc: "Write the audit report."})
}

func (s *XScenario) shape(name string) {
	for _, x := range s.Shapes {
		if x == name {
			return
		}
	}
	s.Shapes = append(s.Shapes, name)
}

// UnitOf finds the unit a dispatch of role, phase and task works on; body (its
// dispatch file, "" unknown) tells apart task-less units sharing role and
// phase (an audit's parallel scanners) by their instructions. Nil when none or
// when body cannot tell.
func (s *XScenario) UnitOf(role, phase string, task int, body string) *XUnit {
	var found *XUnit
	n := 0
	for i := range s.Units {
		u := &s.Units[i]
		if u.Role == role && u.Phase == phase && u.Task == task {
			n++
			if found == nil || (body != "" && strings.Contains(body, u.Desc)) {
				found = u
			}
		}
	}
	if n > 1 && (body == "" || !strings.Contains(body, found.Desc)) {
		return nil
	}
	return found
}

// GroupStart is the index of the group whose checkpoint has reason, or -1.
func (s *XScenario) GroupStart(reason string) int {
	for i, g := range s.Groups {
		if g.Reason != "" && g.Reason == reason {
			return i
		}
	}
	return -1
}

// WriteScenario saves s as JSON (the simulated agent reads it).
func WriteScenario(path string, s *XScenario) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return xWriteFile(path, data, 0o644)
}

// ReadScenario loads a scenario WriteScenario saved.
func ReadScenario(path string) (*XScenario, error) {
	data, err := xReadFile(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	var s XScenario
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}
