package pipesim

// The shape "two sessions in one scratch dir" (issue 36, symptom 5): a
// /debugging run of the same project starts while the /build run is live,
// their dispatches overlap in time, and one crash stops both. Each session
// has its own dispatch dir and .dispatch-active-<sid>; .pipeline-active names
// the build run (the first), so the debugging run is found by its
// .dispatch-active-<sid> alone. Its checkpoints go to the project's one
// shadow repository, holding the build run's files of that instant too.
//
// After the crash the build run is resumed and continued as every seed's run
// is (crashes again included), then the debugging run is resumed by its
// dispatch dir and continued, and the end state of both is judged: the
// project's tree and history against the reference, which holds both
// sessions' work, and each session's outputs, manifests and seqs. A commit
// inside the other session's in-flight window is that session's work: a
// resume that charges it to its own dispatch (and restores it away), or
// restores a checkpoint of the other session over this one's work, changes
// the tree.
//
// The debugging run's work files go to their own directory (fixes/), so that
// neither session's work is the other's base: the reference is the same
// whatever order the two sessions' steps take.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const (
	// xTwoSessionsEvery: one seed in this many has a second live session.
	xTwoSessionsEvery = 10
	// xSecondDir is the project directory of the second session's work.
	xSecondDir = "fixes"
)

// newXSecondSession makes the /debugging run overlapping s: it starts just
// after one of the first three fifths of s's dispatches (laid out as
// xSetupFor lays them out), from a stream of its own.
func (s *XScenario) newXSecondSession() *XScenario {
	r := rand.New(rand.NewPCG(uint64(s.Seed), 0x5ec0d))
	o := s.xFirstOrch()
	var starts []time.Time
	for _, e := range o.events {
		if e.kind == xBefore {
			starts = append(starts, e.at)
		}
	}
	start := s.Start.Add(time.Minute)
	if len(starts) > 0 {
		start = starts[r.IntN(max(1, len(starts)*3/5))].Add(time.Duration(5+r.IntN(60)) * time.Second)
	}
	start = start.Truncate(time.Second)
	d := &XScenario{Seed: s.Seed, Skill: "debugging", Sid: fmt.Sprint(start.Unix()), Start: start, Branch: s.Branch, lineCache: &xLineCache{}, second: true}
	if d.Sid == s.Sid {
		d.Start = d.Start.Add(time.Second)
		d.Sid = fmt.Sprint(d.Start.Unix())
	}
	g := 0
	add := func(reason string, units ...XUnit) {
		g++
		grp := XGroup{Reason: reason}
		for _, u := range units {
			u.Index, u.Group, u.Dir = len(d.Units), g, xSecondDir
			u.Tier = pick(r, tiers)
			if u.Class == Mutating && r.IntN(6) == 0 {
				u.Fails = 1
			}
			d.Units = append(d.Units, u)
			grp.Units = append(grp.Units, u.Index)
		}
		d.Groups = append(d.Groups, grp)
	}
	bug := pick(r, []string{"the parser crashes on empty input", "refunds of EUR charges fail with a currency mismatch", "the exporter drops the last row"})
	var inv []XUnit
	for i, what := range []string{"Error analysis", "Change analysis", "Evidence gathering"}[:1+r.IntN(3)] {
		inv = append(inv, XUnit{ID: fmt.Sprintf("investigate%d", i+1), Role: "investigator", Phase: "1", Class: Conversation, Desc: what + ": " + bug + "."})
	}
	add("", inv...)
	cycles := 1 + r.IntN(2)
	for c := 1; c <= cycles; c++ {
		add(fmt.Sprintf("pre-debug-fix-cycle-%d", c), XUnit{ID: fmt.Sprintf("fix%d", c), Role: "implementer", Phase: "4", Class: Mutating,
			Desc: fmt.Sprintf("Fix cycle %d: fix the root cause of %s. TDD: failing test first.", c, bug)})
		add("", XUnit{ID: fmt.Sprintf("verify%d", c), Role: "fix-verifier", Phase: "4", Class: Conversation, Desc: fmt.Sprintf("Verify fix cycle %d against the reproduction.", c)})
	}
	add("pre-debug-gate", XUnit{ID: "gate", Role: "quality-gate", Phase: "5", Class: Conversation, Desc: "Quality gate on the fix of " + bug + "."})
	return d.finish()
}

// xFirstOrch is the original orchestrator of s's run, its events laid out
// (the marker, then every group); a second session's has a stream of its own.
func (s *XScenario) xFirstOrch() *xOrch {
	stream := uint64(0x0c4)
	if s.second {
		stream = 0xdeb06
	}
	o := &xOrch{s: s, r: rand.New(rand.NewPCG(uint64(s.Seed), stream)), t: s.Start, nextSeq: 1}
	o.events = append(o.events, xev{kind: xMarker, at: s.Start})
	all := map[int]bool{}
	for i := range s.Units {
		all[i] = true
	}
	o.groups(0, all)
	for i := range o.events {
		o.events[i].sc = s
	}
	return o
}

// xMergeEvents interleaves the second session's events into the first's by
// time (the first's first at equal times), each list keeping its order.
func xMergeEvents(first, second []xev) []xev {
	out := make([]xev, 0, len(first)+len(second))
	out = append(out, first...)
	out = append(out, second...)
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	// each list's times never go back (an orchestrator's clock), so a stable
	// sort by time keeps both orders
	sort.SliceStable(idx, func(a, b int) bool { return out[idx[a]].at.Before(out[idx[b]].at) })
	merged := make([]xev, len(out))
	for i, j := range idx {
		merged[i] = out[j]
	}
	return merged
}

// xSecondLayout is where the second session of the run at L lives: the same
// project, home and scratch dir, its own dispatch dir.
func (s *XScenario) xSecondLayout(L xLayout) xLayout {
	return newXLayout(L.root, s.Second.Sid)
}

// xSecondArgs are the arguments of the second session's resume: replay given
// its dispatch dir.
func xSecondArgs(opt XOptions, L2 xLayout, now time.Time) []string {
	return []string{"--yes", "--json", "--agent", opt.Agent, "--now", now.Format(time.RFC3339), L2.dd + string(filepath.Separator)}
}

// xBothLive is the range of crash points (indices of events, as XRunSeed cuts
// them) where both sessions are live: after the second session's first
// manifest line (as after the first's, firstLine) and at or before the last
// event of either; the whole run from firstLine when there
// is none.
func (s *XScenario) xBothLive(events []xev, firstLine int) (lo, hi int) {
	first, last, ownLast := -1, -1, -1
	for i, e := range events {
		if e.sc == s.Second {
			if first < 0 && e.kind == xBefore {
				first = i // its first line written whole: a run to resume
			}
			last = i
		} else {
			ownLast = i
		}
	}
	lo, hi = max(firstLine, first+1), min(last, ownLast)
	if first < 0 || lo > hi {
		return firstLine, len(events) - 1
	}
	return lo, hi
}

// xResumeSecond resumes the second session by its dispatch dir and continues
// it from the hand-off (no crash of its own); stop says the seed ends there
// (the spec's own stop, or a resume that failed: a finding).
func (s *XScenario) xResumeSecond(L xLayout, opt XOptions, ctl string, now time.Time, r *rand.Rand) (out []XFinding, stop bool) {
	d := s.Second
	L2 := s.xSecondLayout(L)
	// the binary's simulated agent reads the scenario of the session it works
	// for, kills replay only as ctl/kill says (none here) and counts its
	// calls per replay run
	_ = os.Remove(filepath.Join(ctl, "kill"))
	calls, _ := filepath.Glob(filepath.Join(ctl, "call-*"))
	for _, c := range calls {
		_ = os.Remove(c)
	}
	_ = WriteScenario(filepath.Join(ctl, "scenario.json"), d)
	defer WriteScenario(filepath.Join(ctl, "scenario.json"), s)
	call := func(plan bool, args []string) XReplayResult {
		return opt.Replay(XCall{Dir: L.project, PidFile: filepath.Join(ctl, "replay.pid"),
			Env:  []string{"HOME=" + L.home, "TMPDIR=" + L.tmp, "SIMAGENT_CTL=" + ctl},
			Args: args, Plan: plan, Home: L.home, Tmp: L.tmp, Now: now, Scenario: d})
	}
	if opt.Keep {
		_ = os.CopyFS(filepath.Join(filepath.Dir(ctl), "before-resume-second"), os.DirFS(L.root))
	}
	res := call(false, xSecondArgs(opt, L2, now))
	if opt.Keep {
		_ = os.WriteFile(filepath.Join(ctl, "resume-second.out"), []byte(fmt.Sprintf("exit %d killed %v\n%s\n--- stderr\n%s", res.Code, res.Killed, res.Stdout, res.Stderr)), 0o644)
	}
	var h handoff
	if res.Code == 0 && json.Unmarshal([]byte(res.Stdout), &h) != nil {
		plan := call(true, []string{"plan", "--json", "--now", now.Format(time.RFC3339), L2.dd + string(filepath.Separator)})
		res.Code = plan.Code
		if json.Unmarshal([]byte(plan.Stdout), &h.Plan) != nil && res.Code == 0 {
			res.Code = -2
		}
	}
	if res.Code != 0 && strings.Contains(res.Stderr, "No verified boundary") && !d.xAnyVerifiable(L2) {
		s.shape("second-session-no-verified-boundary-refused")
		return nil, true
	}
	if res.Code != 0 {
		return []XFinding{{Check: "resume-second-session", Class: xExitClass(s, res), Detail: xLastLine(res.Stderr)}}, true
	}
	o := &xOrch{s: d, r: r, t: now.Add(10 * time.Minute), nextSeq: d.xNextSeq(L2, h)}
	run, from := d.xContinuation(L2, h)
	o.groups(from, run)
	for _, e := range o.events {
		if err := d.xApply(L2, e, 0); err != nil {
			return []XFinding{{Check: "continuation", Class: "apply", Detail: err.Error()}}, true
		}
	}
	return nil, false
}

// xExitClass is the finding class of a resume that exited with an error:
// "exit-N", or, on a seed with a second session, "others-work-refused" for
// the refusal to restore a checkpoint past the other session's commits (the
// two sessions' work interleaved after both checkpoints: neither restore can
// leave the other's work in place).
func xExitClass(s *XScenario, out XReplayResult) string {
	if s.Second != nil && strings.Contains(out.Stderr, "another run's work on this project") {
		return "others-work-refused"
	}
	return fmt.Sprintf("exit-%d", out.Code)
}
