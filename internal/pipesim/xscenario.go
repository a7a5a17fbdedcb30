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
	"os"
	"path/filepath"
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
	// Shapes made on this seed (counted by bench/sim.sh).
	Shapes []string `json:"shapes,omitempty"`
}

// NewXScenario makes seed's scenario: a /build run (design, plan, waves of
// implementers and reviewers, code review and gate). One seed in 25 is wider
// and longer than 6 x 45 (up to 9 waves of up to 8 implementers).
func NewXScenario(seed int64) *XScenario {
	r := rand.New(rand.NewPCG(uint64(seed), 0x36c0ffee))
	zone := time.FixedZone("", pick(r, zones)*60)
	start := time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(28), 7+r.IntN(12), r.IntN(60), r.IntN(60), 0, zone)
	s := &XScenario{Seed: seed, Skill: "build", Sid: fmt.Sprint(start.Unix()), Start: start,
		Branch: pick(r, []string{"feat/billing", "fix/refund-currency", "chore/hardening", "feat/exports"})}
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
	for i := range s.Units {
		s.Units[i].ID = fmt.Sprintf("g%02d-%s", s.Units[i].Group, s.Units[i].ID)
	}
	return s
}

func (s *XScenario) shape(name string) {
	for _, x := range s.Shapes {
		if x == name {
			return
		}
	}
	s.Shapes = append(s.Shapes, name)
}

// UnitOf finds the unit a dispatch of role, phase and task works on (every
// unit of the script has its own), or nil.
func (s *XScenario) UnitOf(role, phase string, task int) *XUnit {
	for i := range s.Units {
		u := &s.Units[i]
		if u.Role == role && u.Phase == phase && u.Task == task {
			return u
		}
	}
	return nil
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
	return os.WriteFile(path, data, 0o644)
}

// ReadScenario loads a scenario WriteScenario saved.
func ReadScenario(path string) (*XScenario, error) {
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	var s XScenario
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}
