package pipesim

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// XCall is one run of the resume the driver asks for: the real product,
// started by the caller (the e2e test runs the binary; internal/testkit/pipesim/inproc
// calls the product's functions in process), so this package imports none of
// replay's code. Args and Env are the binary's command line; the fields after
// them say the same for an in-process caller.
type XCall struct {
	Dir     string   // the project: the working directory
	Env     []string // HOME, TMPDIR, SIMAGENT_CTL
	Args    []string // replay's arguments
	PidFile string   // the caller writes the started process's pid here

	Plan      bool      // `replay plan --json`, else `replay --yes --json --agent <sim>`
	Home, Tmp string    // $HOME and $TMPDIR
	Now       time.Time // --now
	// Scenario is the seed's scenario the simulated agent works from
	// ($SIMAGENT_CTL/scenario.json).
	Scenario *XScenario
	// Kill, when set, makes the Kill.Call-th agent call kill the session
	// ($SIMAGENT_CTL/kill).
	Kill *XKill
	// RestoreKill, when set, kills the session during replay's own checkpoint
	// restore (in process only: XOptions.RestoreFaults).
	RestoreKill *XRestoreKill
}

// XRestoreKill is where a crash during replay's checkpoint restore leaves the
// project: At is XRestoreAfterSafety (the safety checkpoint and its ref
// written, no file restored), XRestoreMidFiles (of the files the restore
// removes, then of those it writes, each in path order, the first File mod
// (n+1) changed, the next one torn at half its bytes when Tear and a write) or
// XRestoreAfterFiles (every file restored, the branch not moved yet).
type XRestoreKill struct {
	At   string
	File int
	Tear bool
}

// The points of an XRestoreKill.
const (
	XRestoreAfterSafety = "after-safety"
	XRestoreMidFiles    = "mid-files"
	XRestoreAfterFiles  = "after-files"
)

// XReplayResult is what that run did.
type XReplayResult struct {
	Stdout, Stderr string
	Code           int
	Killed         bool // it died of SIGKILL (the simulated agent crashed it)
	// KilledInRestore says the kill was RestoreKill's, during the restore.
	KilledInRestore bool
}

// XOptions drive one seed.
type XOptions struct {
	Replay func(XCall) XReplayResult
	// Agent is the command of the simulated agent (cmd/simagent's binary).
	Agent string
	// MaxCrashes is the most crashes a seed makes (3 when 0).
	MaxCrashes int
	// Keep leaves the run on disk.
	Keep bool
	// RestoreFaults arms XCall.RestoreKill on some resumes: the caller can
	// kill replay inside its checkpoint restore (the in-process one).
	RestoreFaults bool
}

// XFinding is one way the end state differs from the reference.
type XFinding struct {
	Check  string `json:"check"`  // tree, history, output, manifest, seq, replay_of, user-file, resume
	Class  string `json:"class"`  // what kind of difference
	Detail string `json:"detail"` // the file, unit or seq
}

// XResult is one seed's run end to end.
type XResult struct {
	Seed     int64      `json:"seed"`
	Crashes  int        `json:"crashes"`
	Resumes  int        `json:"resumes"`
	Findings []XFinding `json:"findings,omitempty"`
	// Precision: Planned resumes made a plan, Exact of them redid exactly the
	// minimum the latest provable boundary needs; Redo and MinRedo are those of
	// the first resume that did not (RedoAt), else of the first (-1 when none
	// planned).
	Planned, Exact int
	// Explained counts the resumes that redid more than the minimum where the
	// generator confirms the evidence was genuinely missing: a failed check
	// names a dispatch whose evidence it removed, and the redo is exactly the
	// minimum with that dispatch's unit not on disk (Why says which).
	Explained             int      `json:"explained,omitempty"`
	Why                   []string `json:"why,omitempty"`
	Redo, MinRedo, RedoAt int
	Failed                []string `json:"failed,omitempty"` // the first plan's failed verifications
	Shapes                []string `json:"shapes"`
	// Stages is the wall time each stage of the seed took (bench/sim.sh
	// prints their sums): generate, reference, crash, resume, precision,
	// continuation, oracle.
	Stages XStages `json:"-"`
}

// XStages is the wall time of each stage of one seed.
type XStages struct {
	Generate, Reference, Crash, Resume, Precision, Continuation, Oracle time.Duration
}

// Add sums o into st.
func (st *XStages) Add(o XStages) {
	st.Generate += o.Generate
	st.Reference += o.Reference
	st.Crash += o.Crash
	st.Resume += o.Resume
	st.Precision += o.Precision
	st.Continuation += o.Continuation
	st.Oracle += o.Oracle
}

// String names each stage's share.
func (st XStages) String() string {
	total := st.Generate + st.Reference + st.Crash + st.Resume + st.Precision + st.Continuation + st.Oracle
	var b strings.Builder
	for _, x := range []struct {
		name string
		d    time.Duration
	}{{"generate", st.Generate}, {"reference", st.Reference}, {"crash", st.Crash}, {"resume", st.Resume}, {"precision", st.Precision}, {"continuation", st.Continuation}, {"oracle", st.Oracle}} {
		fmt.Fprintf(&b, "%s %s (%.0f%%); ", x.name, x.d.Round(time.Millisecond), 100*float64(x.d)/float64(max(total, 1)))
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// handoff is the part of `replay --yes --json --agent` the simulated
// orchestrator reads to continue the skill: the plan's skip and redo lists and
// next seq, and what the re-dispatch did.
type handoff struct {
	Plan struct {
		NextSeq int `json:"next_seq"`
		Skip    []struct {
			Seq int `json:"seq"`
		} `json:"skip"`
		Redo []struct {
			Seq  int    `json:"seq"`
			Role string `json:"role"`
		} `json:"redo"`
		FailedVerifications []string `json:"failed_verifications"`
	} `json:"plan"`
	Redispatch []struct {
		Seq      int    `json:"seq"`
		ReplayOf int    `json:"replay_of"`
		Role     string `json:"role"`
		Status   string `json:"status"`
	} `json:"redispatch"`
}

// crashSnap is what was on disk at one crash.
type crashSnap struct {
	files     map[string]string
	manifests map[string]string
}

// XRunSeed runs seed end to end under root: the reference (every event), the
// crashed run (cut at a random instant, damaged as crashes damage runs),
// resumed with the real product and continued by the simulated orchestrator
// from its hand-off, crashed again (in the product's re-dispatch or in the
// continuation) up to MaxCrashes times, and judges the end state.
func XRunSeed(seed int64, root string, opt XOptions) (res XResult) {
	res = XResult{Seed: seed, Redo: -1, MinRedo: -1}
	if opt.MaxCrashes == 0 {
		opt.MaxCrashes = 3
	}
	if !opt.Keep {
		defer os.RemoveAll(root)
	}
	defer xForgetLoose(root)
	fail := func(check, class, detail string) {
		res.Findings = append(res.Findings, XFinding{Check: check, Class: class, Detail: detail})
	}
	mark := time.Now()
	lap := func(d *time.Duration) {
		now := time.Now()
		*d += now.Sub(mark)
		mark = now
	}
	s := NewXScenario(seed)
	// the shapes made, however the seed ends (a resume that fails ends it early)
	defer func() { res.Shapes = s.Shapes }()
	r := rand.New(rand.NewPCG(uint64(seed), 0xc4a54))
	lap(&res.Stages.Generate)

	// the reference: every event, no crash; only the project's final tree
	// and history are compared, so only the events that write the project
	// are applied (xProjectEvent), in memory (xReference)
	refFiles, refHist, err := s.xReference()
	if err != nil {
		fail("setup", "reference", err.Error())
		return res
	}
	lap(&res.Stages.Reference)

	// the crashed run
	L := newXLayout(filepath.Join(root, "run"), s.Sid)
	events, err := s.xSetup(L)
	if err != nil {
		fail("setup", "run", err.Error())
		return res
	}
	firstLine := 0
	for i, e := range events {
		if e.kind == xBefore {
			firstLine = i + 1
			break
		}
	}
	lo, hi := firstLine, len(events)-1
	if s.Second != nil {
		// both sessions live at the crash: after the second's start, at or
		// before the last event of either
		lo, hi = s.xBothLive(events, firstLine)
	}
	cut := lo + r.IntN(hi-lo+1)
	if cut*5 < len(events) {
		s.shape("crash-in-first-fifth")
	}
	frac := 0.0
	if r.IntN(2) == 0 {
		frac = 0.1 + 0.8*r.Float64()
		s.shape(fmt.Sprintf("crash-mid-%s", xKindName[events[cut].kind]))
	} else {
		s.shape(fmt.Sprintf("crash-before-%s", xKindName[events[cut].kind]))
	}
	for _, e := range events[:cut] {
		if err := s.xApply(L, e, 0); err != nil {
			fail("setup", "run", err.Error())
			return res
		}
	}
	if err := s.xApply(L, events[cut], frac); err != nil {
		fail("setup", "run", err.Error())
		return res
	}
	crashAt := events[cut].at
	s.xDamage(L, r)
	var snaps []crashSnap
	snap := func() {
		sn := crashSnap{manifests: map[string]string{}}
		sn.files, _ = XFiles(L.project)
		ms := xManifests(L, s.Sid)
		if s.Second != nil {
			ms = append(ms, xManifests(s.xSecondLayout(L), s.Second.Sid)...)
		}
		for _, m := range ms {
			data, _ := xReadFile(m)
			sn.manifests[m] = string(data)
		}
		snaps = append(snaps, sn)
		res.Crashes++
	}
	snap()
	lap(&res.Stages.Crash)

	ctl := filepath.Join(root, "ctl")
	if err := os.MkdirAll(ctl, 0o755); err != nil {
		fail("setup", "ctl", err.Error())
		return res
	}
	_ = WriteScenario(filepath.Join(ctl, "scenario.json"), s)
	// the units dispatched before the crash (a torn dispatch file counts)
	sent := map[int]bool{}
	fileUnit := map[int]int{} // the seq of every dispatch file written, torn or not: its unit
	s.fileUnit = fileUnit
	if s.Second != nil {
		s.Second.fileUnit = map[int]int{}
	}
	s.tornFiles = map[int]bool{}
	for i, e := range events[:cut+1] {
		if e.kind == xFile && (i < cut || frac > 0) {
			if e.sc != nil && e.sc != s {
				e.sc.fileUnit[e.seq] = e.u.Index
				continue
			}
			sent[e.u.Index] = true
			fileUnit[e.seq] = e.u.Index
			if i == cut {
				s.tornFiles[e.seq] = true
			}
		}
	}
	res.Findings = append(res.Findings, s.xBeforeResume(L, opt, ctl, crashAt.Add(time.Hour).Truncate(time.Second))...)
	// crashes inside replay's own restore, drawn from a stream of their own
	// so that a seed they never reach keeps its course
	rr := rand.New(rand.NewPCG(uint64(seed), 0x4e5704e))
	secondDone := s.Second == nil
	lastAt := crashAt // the latest event on disk (the continuation's last step)
	for {
		lap(&res.Stages.Continuation)
		s.frozen = map[string]*xFrozen{} // nothing writes the disk until the resume
		minRedo, before := s.xMinRedo(L, sent)
		missing, minMissing := s.xMissingEvidence(L, sent)
		gone := s.xGone(L, sent, minRedo)
		s.frozen = nil
		lap(&res.Stages.Precision)
		res.Resumes++
		now := crashAt.Add(time.Duration(res.Resumes*3) * time.Hour).Truncate(time.Second)
		_ = os.Remove(filepath.Join(ctl, "kill"))
		calls, _ := filepath.Glob(filepath.Join(ctl, "call-*"))
		for _, c := range calls {
			_ = os.Remove(c) // the agent counts its calls per replay run
		}
		killing := res.Crashes < opt.MaxCrashes && r.IntN(4) == 0
		var kill *XKill
		if killing {
			// the session dies while replay re-dispatches: the j-th agent
			// kills replay after its commit or in the middle of its write
			kill = &XKill{Call: 1 + r.IntN(3), Step: 2 + r.IntN(2), Frac: 0.5}
			_ = xWriteFile(filepath.Join(ctl, "kill"), []byte(fmt.Sprintf("%d %d %g\n", kill.Call, kill.Step, kill.Frac)), 0o644)
		}
		var restoreKill *XRestoreKill
		if draw := rr.IntN(5); opt.RestoreFaults && !killing && res.Crashes < opt.MaxCrashes && draw == 0 {
			restoreKill = &XRestoreKill{At: []string{XRestoreAfterSafety, XRestoreMidFiles, XRestoreAfterFiles}[rr.IntN(3)], File: rr.IntN(8), Tear: rr.IntN(2) == 0}
		}
		if opt.Keep {
			// what the resume starts from, to debug the seed
			_ = os.CopyFS(filepath.Join(root, fmt.Sprintf("before-resume-%d", res.Resumes)), os.DirFS(L.root))
		}
		out := opt.Replay(XCall{Dir: L.project, PidFile: filepath.Join(ctl, "replay.pid"),
			Env:  []string{"HOME=" + L.home, "TMPDIR=" + L.tmp, "SIMAGENT_CTL=" + ctl},
			Args: []string{"--yes", "--json", "--agent", opt.Agent, "--templates", xTemplatesDir(L), "--now", now.Format(time.RFC3339)},
			Home: L.home, Tmp: L.tmp, Now: now, Scenario: s, Kill: kill, RestoreKill: restoreKill})
		if opt.Keep {
			_ = os.WriteFile(filepath.Join(ctl, fmt.Sprintf("resume-%d.out", res.Resumes)), []byte(fmt.Sprintf("exit %d killed %v\n%s\n--- stderr\n%s", out.Code, out.Killed, out.Stdout, out.Stderr)), 0o644)
		}
		lap(&res.Stages.Resume)
		if out.Killed && out.KilledInRestore {
			s.shape("crash-during-replay-restore")
			s.shape("crash-during-replay-restore-" + restoreKill.At)
			snap()
			continue
		}
		if out.Killed {
			s.shape("crash-during-replay-redispatch")
			snap()
			continue
		}
		var h handoff
		if out.Code == 0 && json.Unmarshal([]byte(out.Stdout), &h) != nil {
			// nothing to resume is said in words: the skill reads the plan
			plan := opt.Replay(XCall{Dir: L.project, PidFile: filepath.Join(ctl, "replay.pid"),
				Env:  []string{"HOME=" + L.home, "TMPDIR=" + L.tmp, "SIMAGENT_CTL=" + ctl},
				Args: []string{"plan", "--json", "--templates", xTemplatesDir(L), "--now", now.Format(time.RFC3339)},
				Plan: true, Home: L.home, Tmp: L.tmp, Now: now, Scenario: s})
			out.Code = plan.Code
			if json.Unmarshal([]byte(plan.Stdout), &h.Plan) != nil && out.Code == 0 {
				out.Code = -2
			}
			lap(&res.Stages.Resume)
		}
		if out.Code != 0 && strings.Contains(out.Stderr, "No verified boundary") && !s.xAnyVerifiable(L) {
			// the spec's own stop: nothing before the first boundary can be
			// proved, and only the user may choose to start fresh
			s.shape("no-verified-boundary-refused")
			res.Shapes = s.Shapes
			return res
		}
		if out.Code != 0 && s.Second != nil && !secondDone && strings.Contains(out.Stderr, s.Second.Sid) {
			// the resume refuses while the other session is live and names
			// it: the user resumes that one first, then this one again
			s.shape("other-live-session-named")
			secondDone = true
			res.Resumes++
			fs, stop := s.xResumeSecond(L, opt, ctl, now.Add(time.Hour), r)
			res.Findings = append(res.Findings, fs...)
			if stop {
				return res
			}
			continue
		}
		if out.Code != 0 && s.xAmbiguousRebuildRefused(L, out.Stderr) {
			// nothing on disk says which of several parallel task-less
			// units the dispatch whose file is gone was: a prompt rebuilt
			// from the role's template could be any of them, and the
			// resume rightly stops before dispatching it
			s.shape("ambiguous-rebuild-refused")
			res.Shapes = s.Shapes
			return res
		}
		if out.Code != 0 {
			class := xExitClass(s, out)
			if strings.Contains(out.Stderr, "does not carry the instructions") || strings.Contains(out.Stderr, "no unit of the scenario") {
				// the simulated agent's own words: the prompt replay sent
				// lacks the unit's instructions
				class = "agent-sent-torn-dispatch-file"
			}
			fail("resume", class, xLastLine(out.Stderr))
			return res
		}
		// the orchestrator continues the skill from the hand-off alone
		o := &xOrch{s: s, r: r, t: now.Add(10 * time.Minute), nextSeq: s.xNextSeq(L, h)}
		run, from := s.xContinuation(L, h)
		lap(&res.Stages.Continuation)
		// work done again after this crash: the plan's items, and the units
		// dispatched before it that the skill runs itself
		redo := len(h.Plan.Redo)
		planned := s.xPlanned(L, h)
		for i := range run {
			if before[i] && !planned[i] {
				redo++
			}
		}
		lap(&res.Stages.Precision)
		res.Planned++
		switch {
		case redo == minRedo:
			res.Exact++
		case redo > minRedo && redo == minMissing && xNamesCheck(h.Plan.FailedVerifications, missing) != "":
			res.Explained++
			res.Why = append(res.Why, fmt.Sprintf("resume %d redid %d, minimum %d: %s", res.Resumes, redo, minRedo, xNamesCheck(h.Plan.FailedVerifications, missing)))
		case redo > minRedo && gone.xExplains(s, L, h, redo) != "":
			// a dispatch file the generator cut or removed (xExplains)
			res.Explained++
			res.Why = append(res.Why, fmt.Sprintf("resume %d redid %d, minimum %d: %s", res.Resumes, redo, minRedo, gone.xExplains(s, L, h, redo)))
		case redo > minRedo:
			// the generator made no ambiguous evidence on this run: every
			// item beyond the latest provable boundary's is work redone
			// for nothing
			fail("precision", "redo-beyond-minimum", fmt.Sprintf("resume %d redid %d work items, the latest provable boundary needs %d; failed checks: %s", res.Resumes, redo, minRedo, xFirstOf(h.Plan.FailedVerifications)))
		default:
			fail("precision", "redo-below-minimum", fmt.Sprintf("resume %d redid %d work items, the latest provable boundary needs %d", res.Resumes, redo, minRedo))
		}
		if res.Redo < 0 || (res.Redo == res.MinRedo && redo != minRedo) {
			res.Redo, res.MinRedo, res.Failed, res.RedoAt = redo, minRedo, h.Plan.FailedVerifications, res.Resumes
		}
		o.groups(from, run)
		stop := len(o.events)
		crash := res.Crashes < opt.MaxCrashes && len(o.events) > 0 && r.IntN(3) == 0
		if crash {
			stop = r.IntN(len(o.events))
			s.shape("crash-in-continuation")
		}
		for _, e := range o.events[:stop] {
			if err := s.xApply(L, e, 0); err != nil {
				fail("continuation", "apply", err.Error())
				return res
			}
			lastAt = e.at
		}
		if crash {
			cf := 0.0
			if r.IntN(2) == 0 {
				cf = 0.1 + 0.8*r.Float64()
			}
			_ = s.xApply(L, o.events[stop], cf)
			for i, e := range o.events[:stop+1] {
				if e.kind == xFile && (i < stop || cf > 0) {
					sent[e.u.Index] = true
					fileUnit[e.seq] = e.u.Index
					if i == stop {
						s.tornFiles[e.seq] = true
					}
				}
			}
			crashAt = o.events[stop].at
			if r.IntN(5) == 0 {
				s.xUserEdit(L, r)
			}
			snap()
			continue
		}
		break
	}
	if !secondDone {
		// the other session, resumed by its dispatch dir once this one is
		// done (its own stream: the first's course stays what it was)
		res.Resumes++
		now := crashAt.Add(time.Duration(res.Resumes*3) * time.Hour).Truncate(time.Second)
		if !now.After(lastAt) {
			// the continuation ran past that hour: the other session is
			// resumed after it, never at a time before commits on disk
			now = lastAt.Add(time.Hour).Truncate(time.Second)
		}
		fs, stop := s.xResumeSecond(L, opt, ctl, now, rand.New(rand.NewPCG(uint64(seed), 0x5ec0e)))
		res.Findings = append(res.Findings, fs...)
		if stop {
			return res
		}
	}
	lap(&res.Stages.Continuation)
	res.Findings = append(res.Findings, s.xJudge(L, refFiles, refHist, snaps)...)
	lap(&res.Stages.Oracle)
	res.Shapes = s.Shapes
	return res
}

var xKindName = map[xKind]string{xMarker: "marker", xCkpt: "checkpoint", xRow: "checkpoint-row", xFile: "dispatch-file", xBefore: "dispatched-line", xStep: "agent-step", xAfter: "completion-line"}

// xSetup makes the run's project, shadow repository and dirs, and returns the
// original orchestrator's events.
func (s *XScenario) xSetup(L xLayout) ([]xev, error) { return s.xSetupFor(L, false) }

// xProjectEvent says whether e changes the project's tree or history: an
// agent's step of a mutating unit. Markers, checkpoints, dispatch files,
// manifest lines and output files live outside the project.
func xProjectEvent(e xev) bool {
	return e.kind == xStep && e.u.Class == Mutating
}

// xSetupFor is xSetup; projectOnly makes only the project (and applies only
// the older run's events that change it): enough for the reference, whose
// tree and history alone are compared.
func (s *XScenario) xSetupFor(L xLayout, projectOnly bool) ([]xev, error) {
	for _, d := range []string{L.tmp, L.scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := xInitProject(L.project, s.Branch, s.Start.Add(-8*24*time.Hour)); err != nil {
		return nil, err
	}
	if !projectOnly {
		if err := xShadowInit(L.shadow, L.project); err != nil {
			return nil, err
		}
	}
	if old := s.Older; old != nil {
		oL := newXLayout(L.root, old.Sid)
		o := &xOrch{s: old, r: rand.New(rand.NewPCG(uint64(s.Seed), 0x01d)), t: old.Start, nextSeq: 1}
		o.events = append(o.events, xev{kind: xMarker, at: old.Start})
		all := map[int]bool{}
		for i := range old.Units {
			all[i] = true
		}
		o.groups(0, all)
		for _, e := range o.events {
			if projectOnly && !xProjectEvent(e) {
				continue
			}
			if err := old.xApply(oL, e, 0); err != nil {
				return nil, err
			}
		}
	}
	o := &xOrch{s: s, r: rand.New(rand.NewPCG(uint64(s.Seed), 0x0c4)), t: s.Start, nextSeq: 1}
	o.events = append(o.events, xev{kind: xMarker, at: s.Start})
	all := map[int]bool{}
	for i := range s.Units {
		all[i] = true
	}
	o.groups(0, all)
	if s.Second != nil {
		// the second live session's events between this run's, by time
		return xMergeEvents(o.events, s.Second.xFirstOrch().events), nil
	}
	return o.events, nil
}

// xDamage is what may happen to a crashed run before the resume: the branch
// reset, an output file lost, torn or emptied, the user's own edits.
func (s *XScenario) xDamage(L xLayout, r *rand.Rand) {
	if r.IntN(10) == 0 {
		// only this run's own commits: an older run's finished work is not
		// the crash's to lose
		if own := xOwnCommits(L.project, s.Start); own > 0 && s.Second == nil {
			if xResetHard(L.project, 1+r.IntN(min(2, own))) == nil {
				s.shape("commit-lost-branch-reset")
			}
		}
	}
	// a completed dispatch's output lost after the crash (no receipt: the
	// generator writes none). A torn or emptied output is not made here: a
	// file of any size is all the evidence dispatch.py leaves, so accepting it
	// is a choice the spec allows, and the oracle must pass every such choice.
	outs, _ := filepath.Glob(filepath.Join(L.dd, "*-output.md"))
	if len(outs) > 0 && r.IntN(12) == 0 {
		if os.Remove(outs[r.IntN(len(outs))]) == nil {
			s.shape("output-missing")
		}
	}
	if r.IntN(8) == 0 {
		s.xUserEdit(L, r)
	}
}

// xUserEdit is the user's own uncommitted file at the crash.
func (s *XScenario) xUserEdit(L xLayout, r *rand.Rand) {
	p := filepath.Join(L.project, "notes", fmt.Sprintf("user-%d.txt", r.IntN(1000)))
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil && xWriteFile(p, []byte("the user's notes, never committed\n"), 0o644) == nil {
		s.shape("uncommitted-user-edit")
	}
}

// xContinuation reads the hand-off: the units replay says are done (skipped,
// or re-dispatched and completed) are done; the orchestrator runs every unit
// after the last one the plan names, and the plan's items whose re-dispatch
// did not complete; it starts at the group of the first.
func (s *XScenario) xContinuation(L xLayout, h handoff) (map[int]bool, int) {
	lines := s.xReadLines(L)
	unitOf := func(seq int) *XUnit {
		for depth := 0; depth < 20; depth++ {
			l, ok := lines[seq]
			if !ok {
				return s.xUnitOfFile(L, seq)
			}
			if l.ReplayOf != nil {
				seq = *l.ReplayOf
				continue
			}
			return s.xUnitOfLine(L, l)
		}
		return nil
	}
	last := -1
	named := map[int]bool{}
	for _, k := range h.Plan.Skip {
		if u := unitOf(k.Seq); u != nil {
			named[u.Index], last = true, max(last, u.Index)
		}
	}
	redo := map[int]bool{}
	for _, k := range h.Plan.Redo {
		if u := unitOf(k.Seq); u != nil {
			redo[u.Index], last = true, max(last, u.Index)
		}
	}
	done := map[int]bool{}
	for i := range named {
		done[i] = true
	}
	for _, d := range h.Redispatch {
		if u := unitOf(d.ReplayOf); u != nil && d.Status == "completed" {
			done[u.Index] = true
		}
	}
	run := map[int]bool{}
	from := len(s.Groups)
	for i := range s.Units {
		if (i > last || redo[i]) && !done[i] {
			run[i] = true
			from = min(from, s.Units[i].Group-1)
		}
	}
	return run, from
}

var xSeqField = regexp.MustCompile(`"seq":\s*(\d+)`)

// xNextSeq is the seq the continuing orchestrator's bookkeeping allocates
// next: one above the hand-off's next seq, replay's own dispatches, every seq
// a manifest line (torn ones included) or a dispatch file name uses.
func (s *XScenario) xNextSeq(L xLayout, h handoff) int {
	next := h.Plan.NextSeq
	for _, d := range h.Redispatch {
		next = max(next, d.Seq+1)
	}
	for _, m := range xManifests(L, s.Sid) {
		data, _ := xReadFile(m)
		for _, sm := range xSeqField.FindAllStringSubmatch(string(data), -1) {
			if n, err := strconv.Atoi(sm[1]); err == nil {
				next = max(next, n+1)
			}
		}
		ents, _ := os.ReadDir(filepath.Dir(m))
		for _, e := range ents {
			if i := strings.IndexByte(e.Name(), '-'); i > 0 {
				if n, err := strconv.Atoi(e.Name()[:i]); err == nil {
					next = max(next, n+1)
				}
			}
		}
	}
	return next
}

var xHeaderPhaseTask = regexp.MustCompile(`\*\*Phase:\*\* (\S+) \| \*\*Task:\*\* (\S+)`)

// xUnitOfLine is the unit of a manifest line: by role, phase and task, and by
// its dispatch file's instructions where those do not tell.
func (s *XScenario) xUnitOfLine(L xLayout, l xLineRec) *XUnit {
	if u := s.UnitOf(l.Role, l.Phase, l.Task, ""); u != nil {
		return u
	}
	for _, dir := range []string{filepath.Dir(l.path), L.dd, filepath.Join(L.scratch, "crucible-dispatch-"+s.Sid)} {
		if data, err := xReadFile(filepath.Join(dir, filepath.Base(l.File))); err == nil {
			if u := s.UnitOf(l.Role, l.Phase, l.Task, string(data)); u != nil {
				return u
			}
		}
	}
	return nil
}

// xUnitOfRecord is the unit of a manifest line for the precision: what the
// line and its dispatch file say (xUnitOfLine), else what the generator knows:
// the unit it wrote the dispatch file of the line's seq, or of the seq its
// replay_of chain leads to, for (a task-less parallel dispatch whose file is
// gone, or a replay of one, says nothing on disk about which unit it was).
func (s *XScenario) xUnitOfRecord(L xLayout, l xLineRec, lines map[int]xLineRec) *XUnit {
	if u := s.xUnitOfLine(L, l); u != nil {
		return u
	}
	seq := l.Seq
	for depth := 0; depth < 20; depth++ {
		if i, ok := s.fileUnit[seq]; ok {
			return &s.Units[i]
		}
		next, ok := lines[seq]
		if !ok || next.ReplayOf == nil {
			return nil
		}
		seq = *next.ReplayOf
	}
	return nil
}

// xUnitOfFile is the unit of a seq known by its dispatch file alone.
func (s *XScenario) xUnitOfFile(L xLayout, seq int) *XUnit {
	for _, dir := range []string{L.dd, filepath.Join(L.scratch, "crucible-dispatch-"+s.Sid)} {
		matches, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d-*.md", seq)))
		for _, m := range matches {
			role := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), fmt.Sprintf("%d-", seq)), ".md")
			data, err := xReadFile(m)
			if err != nil || strings.HasSuffix(role, "-output") {
				continue
			}
			if sm := xHeaderPhaseTask.FindStringSubmatch(string(data)); sm != nil {
				task, _ := strconv.Atoi(sm[2])
				if u := s.UnitOf(role, sm[1], task, string(data)); u != nil {
					return u
				}
			}
		}
	}
	return nil
}

// xPlanned is the units the plan's redo list names. A seq known by its
// dispatch file alone is the unit the generator wrote that file for
// (s.fileUnit): a file torn by a crash may no longer say which unit it was.
func (s *XScenario) xPlanned(L xLayout, h handoff) map[int]bool {
	lines := s.xReadLines(L)
	out := map[int]bool{}
	for _, k := range h.Plan.Redo {
		seq := k.Seq
		for depth := 0; depth < 20; depth++ {
			l, ok := lines[seq]
			if !ok {
				if u := s.xUnitOfFile(L, seq); u != nil {
					out[u.Index] = true
				} else if i, made := s.fileUnit[seq]; made {
					out[i] = true
				}
				break
			}
			if l.ReplayOf != nil {
				seq = *l.ReplayOf
				continue
			}
			if u := s.xUnitOfRecord(L, l, lines); u != nil {
				out[u.Index] = true
			}
			break
		}
	}
	return out
}

// xLine is the part of a manifest line the driver and the oracle read.
type xLineRec struct {
	Seq      int    `json:"seq"`
	File     string `json:"file"`
	Role     string `json:"role"`
	Phase    string `json:"phase"`
	Task     int    `json:"task"`
	Status   string `json:"status"`
	ReplayOf *int   `json:"replay_of"`
	Session  string `json:"replay_session"`
	raw      string
	path     string
}

func (l *xLineRec) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	num := func(v any) (int, bool) {
		switch x := v.(type) {
		case float64:
			return int(x), true
		case string:
			n, err := strconv.Atoi(strings.TrimPrefix(x, "t"))
			return n, err == nil
		}
		return 0, false
	}
	if n, ok := num(m["seq"]); ok {
		l.Seq = n
	} else {
		return fmt.Errorf("no seq")
	}
	l.File, _ = m["file"].(string)
	l.Role, _ = m["role"].(string)
	l.Status, _ = m["status"].(string)
	l.Session, _ = m["replay_session"].(string)
	switch p := m["phase"].(type) {
	case string:
		l.Phase = p
	case float64:
		l.Phase = strconv.Itoa(int(p))
	}
	l.Task, _ = num(m["task"])
	if n, ok := num(m["replay_of"]); ok {
		l.ReplayOf = &n
	}
	return nil
}

// xManifests is every manifest of the session: the live dir and the scratch
// copy.
func xManifests(L xLayout, sid string) []string {
	var out []string
	for _, p := range []string{filepath.Join(L.dd, "manifest.jsonl"), filepath.Join(L.scratch, "crucible-dispatch-"+sid, "manifest.jsonl")} {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// xLineCache keeps the parse of every manifest line read, by its text: the
// simulator reads a session's manifests again at each stage (precision,
// continuation, oracle), and the lines already read parse the same way.
type xLineCache struct {
	mu sync.Mutex
	m  map[string]xLineParse
}

type xLineParse struct {
	l  xLineRec
	ok bool
}

// parse is json.Unmarshal of raw into an xLineRec, ok when it parsed; a nil
// cache parses every time.
func (c *xLineCache) parse(raw string) (xLineRec, bool) {
	if c == nil {
		var l xLineRec
		return l, json.Unmarshal([]byte(raw), &l) == nil
	}
	c.mu.Lock()
	p, hit := c.m[raw]
	c.mu.Unlock()
	if !hit {
		p.ok = json.Unmarshal([]byte(raw), &p.l) == nil
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]xLineParse{}
		}
		c.m[raw] = p
		c.mu.Unlock()
	}
	return p.l, p.ok
}

// xReadAll reads every valid line of the session's manifests, in order.
func (s *XScenario) xReadAll(L xLayout) []xLineRec {
	var out []xLineRec
	for _, m := range xManifests(L, s.Sid) {
		data, _ := xReadFile(m)
		for _, raw := range strings.Split(string(data), "\n") {
			if l, ok := s.lineCache.parse(raw); ok {
				if l.ReplayOf != nil { // a pointer of its own, as a fresh parse gives
					n := *l.ReplayOf
					l.ReplayOf = &n
				}
				l.raw, l.path = raw, m
				out = append(out, l)
			}
		}
	}
	return out
}

// xReadLines is each seq's latest line.
func (s *XScenario) xReadLines(L xLayout) map[int]xLineRec {
	out := map[int]xLineRec{}
	for _, l := range s.xReadAll(L) {
		out[l.Seq] = l
	}
	return out
}

// xMinRedo is the fewest work items a resume of the crashed run must redo:
// those dispatched at or after the latest boundary (a checkpoint that exists,
// or the end when no restore is needed) before which every unit completed and
// its work is on disk. The generator knows which work is on disk because it
// made (and damaged) it; it asks nothing of the product.
func (s *XScenario) xEvidence(L xLayout) (dispatched map[int]bool, tree map[string]string, onDisk func(*XUnit) bool) {
	lines := s.xReadAll(L)
	latest := s.xReadLines(L)
	dispatched = map[int]bool{}
	completed := map[int][]int{} // unit -> the seqs of its completed attempts
	for _, l := range lines {
		if u := s.xUnitOfRecord(L, l, latest); u != nil {
			dispatched[u.Index] = true
			if l.Status == "completed" {
				completed[u.Index] = append(completed[u.Index], l.Seq)
			}
		}
	}
	// the dispatch dir is read once: its dispatch files, and its output
	// files by name
	ents, _ := os.ReadDir(L.dd)
	outputs := map[string]string{}
	for _, e := range ents {
		base := e.Name()
		if e.IsDir() || !strings.HasSuffix(base, ".md") {
			continue
		}
		data, err := xReadFile(filepath.Join(L.dd, base))
		if err != nil {
			continue
		}
		if strings.HasSuffix(base, "-output.md") {
			outputs[base] = string(data)
			continue
		}
		for i := range s.Units {
			u := &s.Units[i]
			if strings.Contains(base, "-"+u.Role+".md") && strings.Contains(string(data), "\n"+u.Desc+"\n") {
				dispatched[i] = true
			}
		}
	}
	tree, _ = XFiles(L.project)
	subjects, _, _ := xHistory(L.project)
	onDisk = func(u *XUnit) bool {
		if len(completed[u.Index]) == 0 {
			return false
		}
		switch u.Class {
		case Mutating:
			_, ok := tree[u.workDir()+"/"+u.ID+".txt"]
			return ok && xHasSubject(subjects, XCommitMsg(u))
		case Output:
			// the output of an attempt that completed: one an attempt wrote
			// that never completed (killed after its write) proves nothing
			for _, seq := range completed[u.Index] {
				data, ok := outputs[fmt.Sprintf("%d-%s-output.md", seq, u.Role)]
				if ok && XOutputComplete([]byte(data)) && strings.Contains(data, " output for "+u.ID+"\n") {
					return true
				}
			}
			return false
		}
		return true
	}
	return dispatched, tree, onDisk
}

// xMinRedo is the fewest work items a resume must redo (see xEvidence), with
// the units notOnDisk counted as not on disk, and every unit dispatched so far:
// by a manifest line or a dispatch file, or (sent) by an event the generator
// applied, torn or not.
func (s *XScenario) xMinRedo(L xLayout, sent map[int]bool, notOnDisk ...int) (int, map[int]bool) {
	f := s.xFrozenOf(L)
	dispatched, tree, onDisk := maps.Clone(f.dispatched), f.tree, f.onDisk
	if len(notOnDisk) > 0 {
		proved := onDisk
		onDisk = func(u *XUnit) bool { return !slices.Contains(notOnDisk, u.Index) && proved(u) }
	}
	for i := range sent {
		dispatched[i] = true
	}
	count := func(fromGroup int) int {
		n := 0
		for i := range s.Units {
			if dispatched[i] && s.Units[i].Group-1 >= fromGroup {
				n++
			}
		}
		return n
	}
	// the end: nothing in flight, every unit dispatched on disk or never
	// started (its dispatch file written, torn or whole, but no manifest line:
	// the agent is launched only after dispatch.py's line, so it left nothing
	// and the skill dispatches it again, no restore needed), no partial file
	// of its units
	recorded := f.recordedUnits(s, L)
	all, never := true, 0
	for i := range s.Units {
		if dispatched[i] && !onDisk(&s.Units[i]) {
			if recorded[i] {
				all = false
			} else {
				never++
			}
		}
	}
	// a partial file of this run's units: another live session's unit
	// in flight (its own work dir) is that session's to resume, not work
	// this run left unfinished
	for i := range s.Units {
		u := &s.Units[i]
		if _, ok := tree[u.workDir()+"/"+u.ID+".partial"]; ok {
			all = false
		}
	}
	if all {
		return never, dispatched
	}
	shadowSubjects := f.checkpointReasons(s, L)
	best := 0
	for gi, g := range s.Groups {
		if g.Reason == "" || !shadowSubjects[g.Reason] {
			continue
		}
		ok := true
		for i := range s.Units {
			if s.Units[i].Group-1 < gi && !onDisk(&s.Units[i]) {
				ok = false
			}
		}
		if ok {
			best = gi
		}
	}
	if best == 0 {
		// no checkpoint restores the tree before the first group: the work
		// on disk stays there, so only the units whose work is not on disk
		// are redone (done again on the unrestored tree, the rest would be
		// done twice) — when that reaches the reference: a mutating unit
		// redone after a later group's mutating work that stays would see it
		if n, ok := s.xRedoUnrestored(dispatched, onDisk); ok {
			return n, dispatched
		}
	}
	return count(best), dispatched
}

// xFrozen is what xMinRedo reads of one layout's disk: xEvidence's answers,
// the units the manifests record, this run's checkpoint reasons (the last two
// read when first asked).
type xFrozen struct {
	dispatched map[int]bool // never changed: xMinRedo adds to a copy
	tree       map[string]string
	onDisk     func(*XUnit) bool
	recorded   map[int]bool
	reasons    map[string]bool
}

// xFrozenOf reads L's disk for xMinRedo, or returns what the precision stage
// read of it already (s.frozen).
func (s *XScenario) xFrozenOf(L xLayout) *xFrozen {
	if f := s.frozen[L.dd]; f != nil {
		return f
	}
	f := &xFrozen{}
	f.dispatched, f.tree, f.onDisk = s.xEvidence(L)
	if s.frozen != nil {
		s.frozen[L.dd] = f
	}
	return f
}

// recordedUnits are the units some manifest line of L records.
func (f *xFrozen) recordedUnits(s *XScenario, L xLayout) map[int]bool {
	if f.recorded == nil {
		f.recorded = map[int]bool{}
		latest := s.xReadLines(L)
		for _, l := range s.xReadAll(L) {
			if u := s.xUnitOfRecord(L, l, latest); u != nil {
				f.recorded[u.Index] = true
			}
		}
	}
	return f.recorded
}

// checkpointReasons are the reasons of this run's checkpoints in L's shadow
// repository (those taken since the run started).
func (f *xFrozen) checkpointReasons(s *XScenario, L xLayout) map[string]bool {
	if f.reasons == nil {
		f.reasons = map[string]bool{}
		for sub, at := range xShadowSubjects(L.shadow) {
			if !at.Before(s.Start) {
				f.reasons[strings.SplitN(sub, " | ", 2)[0]] = true
			}
		}
	}
	return f.reasons
}

// xRedoUnrestored counts the dispatched units whose work is not on disk, and
// says whether redoing only them on the unrestored tree reaches the
// reference: no such mutating unit comes before a later group's mutating
// unit whose work is on disk.
func (s *XScenario) xRedoUnrestored(dispatched map[int]bool, onDisk func(*XUnit) bool) (int, bool) {
	n := 0
	for i := range s.Units {
		u := &s.Units[i]
		if !dispatched[i] || onDisk(u) {
			continue
		}
		n++
		if u.Class != Mutating {
			continue
		}
		for j := range s.Units {
			if v := &s.Units[j]; dispatched[j] && v.Class == Mutating && v.Group > u.Group && onDisk(v) {
				return 0, false
			}
		}
	}
	return n, true
}

// xAnyVerifiable says whether the first group's units all completed with
// their work on disk: when they did, a resume has a boundary it can prove.
func (s *XScenario) xAnyVerifiable(L xLayout) bool {
	_, _, onDisk := s.xEvidence(L)
	for _, ui := range s.Groups[0].Units {
		if !onDisk(&s.Units[ui]) {
			return false
		}
	}
	return true
}

// xShadowSubjects maps the subjects of the shadow repository's commits to
// their newest time.
func xShadowSubjects(shadow string) map[string]time.Time {
	out := map[string]time.Time{}
	_ = openXRepo(shadow).reachable(func(c *object.Commit) {
		sub := strings.SplitN(c.Message, "\n", 2)[0]
		if c.Author.When.After(out[sub]) {
			out[sub] = c.Author.When
		}
	})
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func xLastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func xFirstOf(lines []string) string {
	if len(lines) == 0 {
		return "none"
	}
	if len(lines) > 1 {
		return fmt.Sprintf("%s (and %d more)", lines[0], len(lines)-1)
	}
	return lines[0]
}
