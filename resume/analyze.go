package resume

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// Input is everything the resume decision is made from.
type Input struct {
	Profile     *templates.Profile
	Dispatches  []*pipeline.Dispatch
	Checkpoints []pipeline.CheckpointRef // oldest first; the run's own
	// Foreign are checkpoints of another run (taken before this run started):
	// never restored by the decision; when none of the run's own fits, a warning
	// names the one that matches and how to restore it explicitly.
	Foreign  []pipeline.CheckpointRef
	Log      pipeline.CommitLog // nil when there is no project repository
	Evidence pipeline.Evidence
	// FromPhase and FromSeq are the user's overrides; empty and 0 when not given.
	FromPhase string
	FromSeq   int
	// Now is the injected clock, the end of the partial-commit search.
	Now time.Time
	// MustRedo, when set, names dispatches that must be re-executed (an A/B
	// replay's mutated ones): the resume point moves back before the first of them.
	MustRedo func(*pipeline.Dispatch) bool
	// Describe returns a dispatch's task description (the context of its dispatch
	// body), the second evidence of commit attribution; nil when unknown.
	Describe func(*pipeline.Dispatch) string
	// HasContext reports whether a dispatch file holds its "## Context"
	// heading (pipeline.Pipeline.HasContext): a file with no manifest line
	// whose instructions a crash cut before it rules no work out; nil when
	// unknown (nothing is ruled out).
	HasContext func(*pipeline.Dispatch) bool
	// Asks reads what a dispatch file asks its agent to produce: how a role no
	// profile names is verified; nil when unknown.
	Asks func(*pipeline.Dispatch) pipeline.Ask
	// Others are the dispatches of the project's other sessions (runs sharing
	// the scratch directory): a commit in one of their windows is that
	// session's evidence unless this run's evidence is stronger.
	Others []pipeline.OtherDispatch
	// NoShadow says there is no shadow repository: no safety checkpoint can
	// keep the tree, so nothing in it is undone (Undo).
	NoShadow bool
}

// Check is one check that ran while deciding the resume point (for --explain).
type Check struct {
	Boundary string
	Seq      int
	Role     string
	Check    string
	OK       bool
	Detail   string
}

// Crash says where the pipeline stopped.
type Crash struct {
	Boundary   *Boundary
	InFlight   []*pipeline.Dispatch // dispatched, never completed
	Failed     []*pipeline.Dispatch // failed or error and not superseded
	Unrecorded []*pipeline.Dispatch
	// Unverified are dispatches that ended completed (or were superseded by one
	// that did) but whose artifacts failed verification: their work is not on disk.
	Unverified []*pipeline.Dispatch
}

// OtherCommit is a project commit that is another session's work (it lies in
// the window of that session's dispatch and this run's evidence is no stronger).
type OtherCommit struct {
	Commit   pipeline.Commit
	Dispatch pipeline.OtherDispatch
}

// PartialCommit is a project commit made by work that did not complete; the
// restore undoes it and the pre-restore ref keeps it reachable.
type PartialCommit struct {
	Commit   pipeline.Commit
	Dispatch *pipeline.Dispatch
}

// Analysis is the resume decision with every reason behind it.
type Analysis struct {
	// Pipeline is the loaded run the decision is about (set by Decide and
	// DecideFor; nil for an Analyze of bare inputs).
	Pipeline   *pipeline.Pipeline
	Profile    *templates.Profile
	Boundaries []*Boundary
	Dispatches []*pipeline.Dispatch
	// Detected is the latest boundary with everything before it complete.
	Detected *Boundary
	// Resume is the boundary the resume starts from, after overrides, verification
	// and checkpoint correlation.
	Resume     *Boundary
	Checkpoint *pipeline.CheckpointRef
	Skip       []*pipeline.Dispatch
	Redo       []*pipeline.Dispatch
	// Items are the work items Redo holds, in the order of their first attempts:
	// what plan lists and resume re-dispatches, one each.
	Items    []WorkItem
	Checks   []Check
	Failures []Check
	Warnings []string
	// NoVerifiedBoundary is set when verification failed all the way back to the
	// start of the pipeline.
	NoVerifiedBoundary bool
	// NoCheckpoint is set when no checkpoint could be correlated at all.
	NoCheckpoint bool
	Crash        Crash
	Partial      []PartialCommit
	// OthersWork are commits after the checkpoint that lie in another
	// session's dispatch window and are that session's work: never charged to
	// this run; the restore refuses to move the branch past them.
	OthersWork []OtherCommit
	// Preserved is the summed duration of the dispatches that are skipped.
	Preserved time.Duration

	// Kept are the completed dispatches at or after the resume point that are
	// not re-executed because nothing restores the tree there (keepUnrestored):
	// their work is on disk, and doing it again would do it twice. They are
	// listed in Skip too.
	Kept []*pipeline.Dispatch
	// Undo, when set, is what a resume that nothing restores undoes before
	// re-executing: the work of attempts that started and never completed.
	Undo *Undo
	// unkept are the seqs of completed items keepUnrestored does not keep:
	// their commits lie above work Undo undoes.
	unkept map[int]bool

	// later caches hasLaterAttempt; describe reads a dispatch's instructions
	// (Input.Describe), the evidence of sameness for task-less work.
	later map[int]bool
	item  map[int]int
	alone map[int]bool // unstartedAlone's answers
	// idle are the interrupted replays an earlier completed attempt stands
	// for (laterAttempted, idleReplay)
	idle map[int]bool
	// hasContext is Input.HasContext
	hasContext func(*pipeline.Dispatch) bool
	describe   func(*pipeline.Dispatch) string
	// cut is Input.Evidence.Cut: what is left of dispatch headers a crash
	// cut, read by ambiguousRebuild only.
	cut map[int]*manifest.CutDispatchHeader
	// onDisk says whether a completed dispatch's work verifies on disk; nil
	// when the decision re-executes everything after its resume point
	// whatever it restores (an override, an A/B replay's mutated dispatches).
	onDisk func(*pipeline.Dispatch) bool
}

// Analyze decides the resume point (SPEC §4 steps 2–4).
func Analyze(in Input) (*Analysis, error) {
	p := in.Profile
	a := &Analysis{Profile: p, Dispatches: in.Dispatches, describe: in.Describe, hasContext: in.HasContext, cut: in.Evidence.Cut}
	pipeline.SortDispatches(a.Dispatches)
	placeReplays(a.Dispatches)
	a.Boundaries = placeBoundaries(p, in.Checkpoints, a.Dispatches)
	assignWaves(p, a.Dispatches, a.Boundaries)
	v := &verifier{profile: p, log: in.Log, evidence: in.Evidence, marks: boundaryMarks(p, in.Checkpoints), cache: make(map[int]Verdict, len(a.Dispatches)), warn: a.warn,
		dispatches: a.Dispatches, describe: in.Describe, superseded: a.hasLaterAttempt, asks: in.Asks, others: in.Others, now: in.Now}
	if v.now.IsZero() {
		v.now = time.Now()
	}
	a.inferCompletions(v)

	k := a.detect()
	a.Detected = a.Boundaries[k]
	k, err := a.applyOverrides(in, k)
	if err != nil {
		return nil, err
	}
	k = a.includeMustRedo(in, k)
	k = a.verifyBefore(v, k)
	k = a.correlate(in.Checkpoints, in.Foreign, k, v)
	a.Resume = a.Boundaries[k]
	if in.FromPhase == "" && in.FromSeq == 0 && in.MustRedo == nil {
		a.onDisk = func(d *pipeline.Dispatch) bool { return v.verify(d).OK }
	}
	a.split()
	a.findCrash()
	a.findPartialCommits(in, v)
	a.undoUnrestored(in, v)
	a.nameUnidentifiedKept()
	a.explainMatching(v)
	return a, nil
}

// placeReplays places every replay with the dispatch its replay_of chain leads
// to: a replay re-executes that work after a restore, so its own time, later than
// every checkpoint of the original run, says nothing of the boundary its work
// lies before. A chain that leads to no dispatch with a time keeps its own.
func placeReplays(ds []*pipeline.Dispatch) {
	bySeq := make(map[int]*pipeline.Dispatch, len(ds))
	for _, d := range ds {
		if _, dup := bySeq[d.Seq]; !dup {
			bySeq[d.Seq] = d
		}
	}
	placeUntimed(ds)
	for _, d := range ds {
		if d.Time.IsZero() {
			continue // placed by placeUntimed
		}
		d.Placed = time.Time{}
		orig, seen := d, map[int]bool{}
		for orig.ReplayOf > 0 && !seen[orig.Seq] {
			seen[orig.Seq] = true
			next, ok := bySeq[orig.ReplayOf]
			if !ok {
				break
			}
			orig = next
		}
		if orig != d && !orig.PlaceTime().IsZero() {
			d.Placed = orig.PlaceTime()
		}
	}
}

// placeUntimed places a recorded dispatch with no header time (its dispatch
// file gone) as early as the manifest allows: at the header time of the latest
// timed dispatch whose first line comes before its own, or before every
// boundary of its phase when none does. A boundary after that place must then
// prove its work, which with no time it cannot, so the resume starts before it
// and redoes it; placed nowhere it fell after every boundary of its phase, and
// a restore that held its work had it done again.
func placeUntimed(ds []*pipeline.Dispatch) {
	var timed []*pipeline.Dispatch
	for _, d := range ds {
		d.Placed = time.Time{}
		if !d.Time.IsZero() && d.Entry != nil && d.Entry.FirstLine > 0 {
			timed = append(timed, d)
		}
	}
	for _, d := range ds {
		if !d.Time.IsZero() || d.Entry == nil || d.Entry.FirstLine <= 0 {
			continue
		}
		d.Placed = time.Unix(1, 0)
		for _, e := range timed {
			if e.Entry.FirstLine < d.Entry.FirstLine && e.Time.After(d.Placed) {
				d.Placed = e.Time
			}
		}
	}
}

// assignWaves numbers the waves of dispatches in a phase split into waves.
func assignWaves(p *templates.Profile, ds []*pipeline.Dispatch, bs []*Boundary) {
	for _, d := range ds {
		i := p.PhaseIndex(d.Phase)
		if i < 0 || p.Phases[i].Waves == "" {
			continue
		}
		seg := bs[segmentOf(p, d, bs)]
		d.Wave = 1
		if seg.Phase == d.Phase && seg.Wave > 0 {
			d.Wave = seg.Wave
		}
	}
}

// inferCompletions takes a dispatch with no completion line as completed when the
// pipeline moved past its boundary and its artifacts verify (sparse manifests):
// a dispatch of a later boundary was dispatched after it (its first manifest
// line follows d's), so the skill had moved on from d's work. A later boundary
// alone is not that: a replay lies with the work it redoes, before the
// original run's later phases, and nothing may have been dispatched after it.
func (a *Analysis) inferCompletions(v *verifier) {
	p := a.Profile
	movedPast := func(d *pipeline.Dispatch) bool {
		seg := segmentOf(p, d, a.Boundaries)
		for _, e := range a.Dispatches {
			if e.Recorded && segmentOf(p, e, a.Boundaries) > seg && startedAfter(e, d) {
				return true
			}
		}
		return false
	}
	for _, d := range a.Dispatches {
		if !d.Recorded || d.Status != manifest.StatusDispatched || !movedPast(d) {
			continue
		}
		if got := v.verify(d); got.OK {
			d.Inferred = true
			a.warn(fmt.Sprintf("seq %d (%s) has no completion line; the pipeline moved past it and its artifacts verify (%s), so it is taken as completed", d.Seq, d.Role, got.Detail))
		}
	}
}

// startedAfter reports whether e was dispatched after d: its first manifest
// line follows d's, or, without lines to compare, its seq is higher.
func startedAfter(e, d *pipeline.Dispatch) bool {
	if e.Entry != nil && d.Entry != nil && e.Entry.FirstLine > 0 && d.Entry.FirstLine > 0 {
		return e.Entry.FirstLine > d.Entry.FirstLine
	}
	return e.Seq > d.Seq
}

// complete reports whether d needs no redo: it ended completed or skipped, or it
// failed or never finished and a later attempt at the same work completed (a retry
// on a new seq, or a replay of it). A dispatch with no manifest line (its line
// torn by a crash, or never written) never launched its agent: dispatch.py
// appends the dispatched line before the orchestrator starts the agent, so the
// file is an intent, not work. It is complete when a later attempt at its work
// completed: a replay of it (its replay_of names it), a later recorded
// dispatch of the same work by evidence (intentDone), or a later completed
// attempt at the item it joined (supersededBy).
func (a *Analysis) complete(d *pipeline.Dispatch) bool {
	// an attempt that never started, at an item a later attempt completed,
	// is superseded as a recorded one is (supersededBy: a retry of a failed
	// attempt joins its item, and a replay of that attempt completed it;
	// crash simulator seed 31091)
	if !d.Recorded {
		return a.replayedDone(d) || a.intentDone(d) || a.supersededBy(d) != nil
	}
	if d.Done() {
		return true
	}
	return a.supersededBy(d) != nil || a.idleAfterDone(d)
}

// idleAfterDone reports whether d is an interrupted replay of output work an
// earlier attempt at its item completed (idleReplay): that attempt, verified
// on its own, stands for the item, and d blocks nothing.
func (a *Analysis) idleAfterDone(d *pipeline.Dispatch) bool {
	if a.later == nil {
		a.later, a.item = a.laterAttempted()
	}
	return a.idle[d.Seq]
}

// supersededBy returns the later completed attempt at d's work: a dispatch that
// replays d, a retry of d, or a later attempt at the item d is an attempt of (a
// retry of a failed attempt left in flight by a crash, whose item a replay of
// its first attempt then completed).
func (a *Analysis) supersededBy(d *pipeline.Dispatch) *pipeline.Dispatch {
	for _, e := range a.Dispatches {
		if e.Seq <= d.Seq || !e.Recorded || !e.Done() {
			continue
		}
		if a.rootOf(e) == a.rootOf(d) || a.retries(d, e) || a.itemOf(e) == a.itemOf(d) {
			return e
		}
	}
	return nil
}

// replayedDone reports whether a later recorded dispatch whose replay_of chain
// leads to d completed.
func (a *Analysis) replayedDone(d *pipeline.Dispatch) bool {
	for _, e := range a.Dispatches {
		if e.Seq > d.Seq && e.Recorded && e.Done() && e.ReplayOf > 0 && a.rootOf(e) == d.Seq {
			return true
		}
	}
	return false
}

// intentDone reports whether a later recorded dispatch that completed did the
// work of d, a dispatch file with no manifest line: the same role, phase and
// task, and for task-less work the same instructions (sameInstructions; role
// and phase alone never make two dispatches one piece of work). The agent of
// d never started, so there is no sibling it could have run beside.
func (a *Analysis) intentDone(d *pipeline.Dispatch) bool {
	for _, e := range a.Dispatches {
		if e.Seq <= d.Seq || !e.Recorded || !e.Done() || !pipeline.SameWork(d, e) {
			continue
		}
		if d.Task != nil || a.sameInstructions(d, e) {
			return true
		}
	}
	return false
}

// unstartedAlone reports whether d is a dispatch file with no manifest line
// that blocks no boundary: its agent never started (dispatch.py appends the
// dispatched line before the orchestrator starts the agent), so it left
// nothing on disk and no restore is needed for it, and no later recorded
// dispatch could be its work, so handing it to the skill cannot do that work
// twice. A later recorded dispatch could be its work when it has the same
// role, phase and task and, for task-less work, d's body (perhaps cut by the
// crash: nothing measured it) does not rule it out (otherInstructions). A
// mutating d with recorded mutating work after it in a later segment still
// blocks: its work must come before that work. Such a d is the crash's
// unsent intent: the spec's Step 2 partitions the manifest's dispatches, and
// a file with no line is none of them. Every resume point re-dispatches it
// (split); the answers are computed once per analysis.
func (a *Analysis) unstartedAlone(d *pipeline.Dispatch) bool {
	if d.Recorded {
		return false
	}
	if got, ok := a.alone[d.Seq]; ok {
		return got
	}
	got := !a.complete(d)
	for _, e := range a.Dispatches {
		if !got {
			break
		}
		if e.Seq <= d.Seq || !e.Recorded {
			continue
		}
		if pipeline.SameWork(d, e) && (d.Task != nil || !a.otherInstructions(d, e)) {
			got = false
		}
		if d.Class == templates.RoleMutating && e.Class == templates.RoleMutating && segmentOf(a.Profile, e, a.Boundaries) > segmentOf(a.Profile, d, a.Boundaries) {
			got = false
		}
	}
	if a.alone == nil {
		a.alone = map[int]bool{}
	}
	a.alone[d.Seq] = got
	return got
}

// otherInstructions reports whether the instructions of d, a dispatch file
// with no manifest line, rule out that e did its work: d's file holds its
// context heading (cut before it, it holds only the role's preamble), both
// contexts are readable, they are not the same instructions
// (sameInstructions), and d's context is not the start of e's (a file cut by
// a crash is the start of what it was to say).
func (a *Analysis) otherInstructions(d, e *pipeline.Dispatch) bool {
	if a.describe == nil || a.hasContext == nil || !a.hasContext(d) {
		return false
	}
	x, y := ownSeqless(a.describe(d), d.Seq), ownSeqless(a.describe(e), e.Seq)
	return x != "" && y != "" && !strings.HasPrefix(y, x) && !a.sameInstructions(d, e)
}

// rootOf follows replay_of links back to the original dispatch's seq.
func (a *Analysis) rootOf(d *pipeline.Dispatch) int {
	if d.ReplayOf <= 0 {
		return d.Seq // most dispatches replay nothing: no chain to follow
	}
	seen := map[int]bool{}
	for d.ReplayOf > 0 && !seen[d.Seq] {
		seen[d.Seq] = true
		next := a.find(d.ReplayOf)
		if next == nil {
			return d.ReplayOf
		}
		d = next
	}
	return d.Seq
}

// detect returns the index of the latest boundary before which everything is
// complete, recording why later boundaries are not.
func (a *Analysis) detect() int {
	for k := len(a.Boundaries) - 1; k > 0; k-- {
		b := a.Boundaries[k]
		var blocking []string
		for _, d := range a.Dispatches {
			if before(a.Profile, d, b) && !a.complete(d) && !a.unstartedAlone(d) {
				blocking = append(blocking, fmt.Sprintf("seq %d %s %s", d.Seq, d.Role, statusWord(d)))
			}
		}
		if len(blocking) == 0 {
			a.Checks = append(a.Checks, Check{Boundary: b.Label(), Check: "everything before it complete", OK: true})
			return k
		}
		a.Checks = append(a.Checks, Check{Boundary: b.Label(), Check: "everything before it complete", Detail: strings.Join(blocking, "; ")})
	}
	return 0
}

func statusWord(d *pipeline.Dispatch) string {
	switch {
	case !d.Recorded:
		return "has a dispatch file but no manifest line"
	case d.Status == manifest.StatusDispatched:
		return "is in flight (dispatched, never completed)"
	case d.Failed():
		return "ended " + string(d.Status) + " and no later attempt completed"
	}
	return "ended " + string(d.Status)
}

func (a *Analysis) applyOverrides(in Input, k int) (int, error) {
	phase, flag := in.FromPhase, "--from-phase "+in.FromPhase
	if in.FromSeq > 0 {
		d := a.find(in.FromSeq)
		if d == nil {
			return 0, errkind.Errorf(ErrBadResumePoint, "--from-seq %d: no dispatch with that seq in the manifest", in.FromSeq)
		}
		if d.Phase == "" {
			return 0, errkind.Errorf(ErrBadResumePoint, "--from-seq %d: that dispatch has no phase; use --from-phase", in.FromSeq)
		}
		phase, flag = d.Phase, fmt.Sprintf("--from-seq %d (phase %s)", in.FromSeq, d.Phase)
	}
	if phase == "" {
		return k, nil
	}
	want := a.phaseStart(phase)
	if want < 0 {
		return 0, errkind.Errorf(ErrBadResumePoint, "%s: the %s profile has no phase %s", flag, a.Profile.Skill, phase)
	}
	if want > k {
		hint := "--from-phase " + a.Boundaries[k].Phase + " or earlier"
		if in.FromSeq > 0 {
			hint = "a --from-seq of phase " + a.Boundaries[k].Phase + " or earlier"
		}
		return 0, errkind.Errorf(ErrBadResumePoint, "%s is later than the detected resume point (%s): work before it is not complete; use %s", flag, a.Boundaries[k].Label(), hint)
	}
	if want < k {
		from := "phase " + phase
		if in.FromSeq > 0 {
			from = flag
		}
		a.warn(fmt.Sprintf("resuming from %s, earlier than the detected resume point (%s): verified work will be redone", from, a.Boundaries[k].Label()))
	}
	a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[want].Label(), Check: "user override", OK: true, Detail: flag})
	return want, nil
}

// phaseStart returns the index of the boundary where phase starts: its
// phase-start boundary, or, for a phase no boundary opens (a skill with no
// profile whose phase has no checkpoint), the latest boundary before its first
// dispatch. Never the end of the recorded work, which carries the last phase's
// id but starts nothing. -1 when the profile has no such phase.
func (a *Analysis) phaseStart(phase string) int {
	p := a.Profile
	pi := p.PhaseIndex(phase)
	if pi < 0 {
		return -1
	}
	if phase == p.Phases[0].ID {
		return 0
	}
	want := -1
	for _, b := range a.Boundaries {
		if b.Phase == phase && !b.Mid && !b.Start && !b.End {
			want = b.Index
		}
	}
	if want >= 0 {
		return want
	}
	for _, b := range a.Boundaries {
		if !b.End && (b.Start || p.PhaseIndex(b.Phase) < pi) {
			want = b.Index
		}
	}
	return want
}

// includeMustRedo moves the resume point back so that every dispatch MustRedo names
// is re-executed.
func (a *Analysis) includeMustRedo(in Input, k int) int {
	if in.MustRedo == nil {
		return k
	}
	for _, d := range a.Dispatches {
		if !in.MustRedo(d) {
			continue
		}
		if seg := segmentOf(a.Profile, d, a.Boundaries); seg < k {
			a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[seg].Label(), Seq: d.Seq, Role: d.Role, Check: "uses a mutated template", OK: true, Detail: "the replay starts before it so it is re-executed"})
			k = seg
		}
	}
	return k
}

func (a *Analysis) find(seq int) *pipeline.Dispatch {
	for _, d := range a.Dispatches {
		if d.Seq == seq {
			return d
		}
	}
	return nil
}

// verifyBefore verifies every completed dispatch before boundary k, moving back a
// boundary on each failure until a verified one is found.
func (a *Analysis) verifyBefore(v *verifier, k int) int {
	for k > 0 {
		b := a.Boundaries[k]
		failed := false
		for _, d := range a.Dispatches {
			if !before(a.Profile, d, b) || !d.Done() {
				continue
			}
			if a.hasLaterAttempt(d) {
				// An item is judged by its latest attempt: one a later attempt
				// redid (a replay after a restore undid its commit) proves
				// nothing on its own and is given no commit.
				a.Checks = append(a.Checks, Check{Boundary: b.Label(), Seq: d.Seq, Role: d.Role, Check: "latest attempt only", OK: true, Detail: "a later attempt at the same work is the one verified"})
				continue
			}
			got := v.verify(d)
			c := Check{Boundary: b.Label(), Seq: d.Seq, Role: d.Role, Check: got.Check, OK: got.OK, Detail: got.Detail}
			a.Checks = append(a.Checks, c)
			if !got.OK {
				failed = true
				a.Failures = append(a.Failures, c)
			}
		}
		if !failed {
			return k
		}
		k--
	}
	if len(a.Failures) > 0 {
		a.NoVerifiedBoundary = true
	}
	return 0
}

// correlate finds the newest checkpoint of boundary k, falling back to earlier
// boundaries (and moving the resume point with it) when it is missing.
func (a *Analysis) correlate(cps, foreign []pipeline.CheckpointRef, k int, v *verifier) int {
	if k == 0 || a.Boundaries[k].End {
		return k // the start and the end need no checkpoint: nothing is restored
	}
	want := a.Boundaries[k]
	for j := k; j > 0; j-- {
		cp, ok := newestCheckpoint(cps, a.Boundaries[j].Reasons)
		if ok {
			if d, c, later := a.workAfter(v, j, cp); later {
				a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[j].Label(), Seq: d.Seq, Role: d.Role, Check: "checkpoint holds the work before it",
					Detail: fmt.Sprintf("%s %s was taken at %s, before the commit %s of seq %d", cp.Short, cp.Reason, report.Time(cp.Time), short(c.Hash), d.Seq)})
				a.warn(fmt.Sprintf("checkpoint %s (%s) was taken at %s, before the commit %s %q of seq %d (%s), which lies before its boundary: restoring it would undo that verified work, so the resume starts at an earlier boundary",
					cp.Short, cp.Reason, report.Time(cp.Time), short(c.Hash), c.Subject(), d.Seq, d.Role))
				if e := a.untimedEarlier(d, cp.Time); e != nil {
					// the evidence that would place the earlier attempt's end
					// before the checkpoint is gone: the plan names it
					a.Failures = append(a.Failures, Check{Boundary: a.Boundaries[j].Label(), Seq: e.Seq, Role: e.Role, Check: "checkpoint holds the work before it",
						Detail: fmt.Sprintf("no dispatch timestamp (dispatch file missing), and the first dispatch after its completion line was made after %s %s (taken %s): the checkpoint may lack its work, which seq %d redid with commit %s after it",
							cp.Short, cp.Reason, report.Time(cp.Time), d.Seq, short(c.Hash))})
				}
				continue
			}
		}
		if !ok {
			detail := "no checkpoint with this reason"
			if b := a.Boundaries[j]; b.Inferred {
				detail = fmt.Sprintf("no checkpoint with this reason (evicted or never taken); the boundary was placed by its first dispatch at %s", report.Time(b.Time))
			}
			a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[j].Label(), Check: "checkpoint", Detail: detail})
			continue
		}
		a.Checkpoint = cp
		a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[j].Label(), Check: "checkpoint", OK: true, Detail: fmt.Sprintf("%s %s at %s", cp.Short, cp.Reason, report.Time(cp.Time))})
		if j != k {
			a.warn(fmt.Sprintf("Desired checkpoint %s not found. Falling back to %s. Replaying from %s instead of %s.",
				reasonOf(want), cp.Reason, phaseLabel(a.Boundaries[j]), phaseLabel(want)))
		}
		return j
	}
	for j := k; j > 0; j-- {
		cp, ok := newestCheckpoint(foreign, a.Boundaries[j].Reasons)
		if !ok {
			continue
		}
		// Never restored by itself: another run's tree would overwrite this run's
		// work. The user can restore it explicitly.
		a.Checks = append(a.Checks, Check{Boundary: a.Boundaries[j].Label(), Check: "checkpoint of another run", Detail: pipeline.DescribeForeign(*cp) + ": not this run's, not restored"})
		a.warn(fmt.Sprintf("This run has no checkpoint of its own for %s or any earlier boundary; checkpoint %s of another run (taken before this run started) matches %s but is not restored by itself, as its tree would overwrite this run's work. To restore it anyway: replay checkpoint restore %s.",
			reasonOf(want), pipeline.DescribeForeign(*cp), a.Boundaries[j].Reasons[0], cp.Short))
		break
	}
	a.NoCheckpoint = true
	a.Checks = append(a.Checks, Check{Boundary: want.Label(), Check: "checkpoint", Detail: "no checkpoint for it or any earlier boundary"})
	a.warn(fmt.Sprintf("No checkpoint found for %s or any earlier boundary: the file state at the resume point cannot be guaranteed. Resume with the current disk state, or start fresh.", reasonOf(want)))
	return k
}

// workAfter returns a completed dispatch before boundary j (its latest
// attempt: one a later attempt superseded is given no commit) whose
// attributed commit is newer than checkpoint cp while no earlier attempt at
// its item had completed by then: cp's tree does not hold that work, so cp
// is not the state at that boundary.
func (a *Analysis) workAfter(v *verifier, j int, cp *pipeline.CheckpointRef) (*pipeline.Dispatch, pipeline.Commit, bool) {
	if v == nil || v.log == nil {
		return nil, pipeline.Commit{}, false
	}
	at := v.attributed()
	if at == nil || at.Err != nil {
		return nil, pipeline.Commit{}, false
	}
	for _, d := range a.Dispatches {
		if !before(a.Profile, d, a.Boundaries[j]) || !d.Done() || a.hasLaterAttempt(d) {
			continue
		}
		if got, ok := at.Assigned[d.Seq]; ok && got.Commit.Time.After(cp.Time) && !a.itemDoneBy(d, cp.Time) {
			return d, got.Commit, true
		}
	}
	return nil, pipeline.Commit{}, false
}

// itemDoneBy reports whether an earlier attempt at d's work item completed by
// t: a checkpoint taken then holds the item's work in that attempt's version
// (a replay redid it after a restore undid it, and the checkpoint still
// holds the original's).
func (a *Analysis) itemDoneBy(d *pipeline.Dispatch, t time.Time) bool {
	for _, e := range a.Dispatches {
		if e == d || !e.Recorded || !e.Done() || a.itemOf(e) != a.itemOf(d) {
			continue
		}
		if end, ok := a.endedBy(e); ok && !end.After(t) {
			return true
		}
	}
	return false
}

// untimedEarlier returns an earlier completed attempt at d's work item whose
// end nothing places by t because its header time is gone (its dispatch file
// missing): had it ended by then, a checkpoint taken at t would hold the
// item's work (itemDoneBy). Nil when there is none.
func (a *Analysis) untimedEarlier(d *pipeline.Dispatch, t time.Time) *pipeline.Dispatch {
	for _, e := range a.Dispatches {
		if e == d || e.Seq > d.Seq || !e.Recorded || !e.Done() || !e.Time.IsZero() || a.itemOf(e) != a.itemOf(d) {
			continue
		}
		if end, ok := a.endedBy(e); !ok || end.After(t) {
			return e
		}
	}
	return nil
}

// endedBy returns a time by which the done dispatch d had ended: its header
// time plus its duration, or, when either is unknown (its dispatch file gone:
// manifest lines carry no time), the earliest header time of a dispatch whose
// first manifest line follows d's completion line: dispatch.py appends each
// line when it happens, so d's completion was recorded before that dispatch
// was made (the upper bound untimedWindow gives d's commit window).
func (a *Analysis) endedBy(d *pipeline.Dispatch) (time.Time, bool) {
	if end, ok := d.End(); ok {
		return end, true
	}
	if d.Entry == nil || d.Entry.FirstLine <= 0 || d.Entry.Line <= d.Entry.FirstLine || !d.Done() || d.Inferred {
		return time.Time{}, false // no completion line: nothing bounds its end
	}
	var hi time.Time
	for _, e := range a.Dispatches {
		if e.Time.IsZero() || e.Entry == nil || e.Entry.FirstLine <= d.Entry.Line {
			continue
		}
		if hi.IsZero() || e.Time.Before(hi) {
			hi = e.Time
		}
	}
	return hi, !hi.IsZero()
}

// reasonOf names the checkpoint a boundary asks for: its first reason, or, for a
// boundary no checkpoint reason marks, its label.
func reasonOf(b *Boundary) string {
	if len(b.Reasons) == 0 {
		return b.Label()
	}
	return b.Reasons[0]
}

// phaseLabel names a boundary's place in the pipeline: "Phase 3", "Phase 3 wave 2",
// or for a gate inside a phase "Phase 4 (pre-inquisitor)".
func phaseLabel(b *Boundary) string {
	switch {
	case b.Wave > 0:
		return fmt.Sprintf("Phase %s wave %d", b.Phase, b.Wave)
	case b.Mid && len(b.Reasons) > 0:
		return fmt.Sprintf("Phase %s (%s)", b.Phase, b.Reasons[0])
	}
	return "Phase " + b.Phase
}

func (a *Analysis) split() {
	a.Kept = nil
	for _, d := range a.Dispatches {
		if before(a.Profile, d, a.Resume) && !a.unstartedAlone(d) {
			a.Skip = append(a.Skip, d)
			if d.DurationS != nil {
				a.Preserved += time.Duration(*d.DurationS * float64(time.Second))
			}
		} else {
			a.Redo = append(a.Redo, d)
		}
	}
	a.groupItems()
	a.keepUnrestored()
}

// keepUnrestored keeps the work items after the resume point whose latest
// attempt completed and whose work verifies on disk when nothing restores the
// tree there (no checkpoint for the resume point or any earlier boundary, or
// the start of the pipeline): every dispatch after the resume point is
// re-executed because the restore undoes its work, and without a restore
// nothing does, so doing it again on the current tree would do it twice (a
// second commit of the same work, an output or an edit made again on top of
// itself). Only the items whose work is not on disk (failed, in flight,
// unverified) are re-executed; the kept ones move to Skip and are named in
// Kept. A user's --from-phase/--from-seq and an A/B replay's mutated
// dispatches re-execute as asked (onDisk is nil).
// keptWarning starts the warning keepUnrestored gives.
const keptWarning = "nothing restores the tree at"

func (a *Analysis) keepUnrestored() {
	if a.onDisk == nil || a.Checkpoint != nil || a.Resume == nil || len(a.Items) == 0 {
		return
	}
	keep := map[int]bool{}
	for _, it := range a.Items {
		last := it.Attempts[len(it.Attempts)-1]
		if !last.Recorded || !last.Done() || !a.onDisk(last) || a.unkept[last.Seq] {
			continue
		}
		for _, d := range it.Attempts {
			keep[d.Seq] = true
		}
	}
	if len(keep) == 0 {
		return
	}
	var redo []*pipeline.Dispatch
	for _, d := range a.Redo {
		if !keep[d.Seq] {
			redo = append(redo, d)
			continue
		}
		a.Kept = append(a.Kept, d)
		if d.DurationS != nil {
			a.Preserved += time.Duration(*d.DurationS * float64(time.Second))
		}
	}
	a.Redo = redo
	a.Skip = a.Skip[:0]
	for _, d := range a.Dispatches { // in seq order, as split lists them
		if keep[d.Seq] || (before(a.Profile, d, a.Resume) && !a.unstartedAlone(d)) {
			a.Skip = append(a.Skip, d)
		}
	}
	a.groupItems()
	seqs := make([]string, 0, len(a.Kept))
	for _, d := range a.Kept {
		seqs = append(seqs, fmt.Sprintf("%d %s", d.Seq, d.Role))
	}
	a.warn(fmt.Sprintf("%s %s, so the completed work after it whose artifacts verify on disk is kept, not re-executed (doing it again on the current tree would do it twice): seq %s",
		keptWarning, a.Resume.Label(), strings.Join(seqs, ", seq ")))
}

func (a *Analysis) findCrash() {
	seg := -1
	for _, d := range a.Dispatches {
		if a.complete(d) {
			continue
		}
		switch {
		case !d.Recorded:
			a.Crash.Unrecorded = append(a.Crash.Unrecorded, d)
		case d.Status == manifest.StatusDispatched:
			a.Crash.InFlight = append(a.Crash.InFlight, d)
		default:
			a.Crash.Failed = append(a.Crash.Failed, d)
		}
		seg = max(seg, segmentOf(a.Profile, d, a.Boundaries))
	}
	seen := map[int]bool{}
	for _, f := range a.Failures {
		d := a.find(f.Seq)
		if d == nil || seen[d.Seq] || before(a.Profile, d, a.Resume) {
			continue
		}
		seen[d.Seq] = true
		a.Crash.Unverified = append(a.Crash.Unverified, d)
		seg = max(seg, segmentOf(a.Profile, d, a.Boundaries))
	}
	if seg >= 0 {
		a.Crash.Boundary = a.Boundaries[seg]
	}
}

// findPartialCommits flags project commits made by mutating work that did not
// complete and that lie after the resume checkpoint: the restore undoes them.
func (a *Analysis) findPartialCommits(in Input, v *verifier) {
	if in.Log == nil || a.Checkpoint == nil {
		return
	}
	end := in.Now
	if end.IsZero() {
		end = time.Now()
	}
	tol := time.Duration(a.Profile.CommitWindowToleranceS) * time.Second
	unplaced := a.unplaced(v)
	var open []*pipeline.Dispatch
	for _, it := range a.Items {
		// Only an item's latest attempt can hold its partial work: an attempt
		// superseded by a later one (a failure retried) is charged with nothing.
		open = append(open, it.Attempts[len(it.Attempts)-1])
	}
	for _, d := range open {
		if d.Class != templates.RoleMutating || d.Done() || d.Time.IsZero() {
			continue
		}
		commits, err := in.Log.Between(d.Time.Add(-tol), end)
		if err != nil {
			a.warn("cannot read the project history for partial commits: " + err.Error())
			return
		}
		for _, c := range commits {
			if !c.Time.After(a.Checkpoint.Time) || !v.partOf(c, d) {
				continue
			}
			if o, theirs := a.othersCommit(in, v, c, d, end); theirs {
				if !a.unplacedClaims(in, unplaced, c, o) {
					a.addOthersWork(c, o)
				}
				continue
			}
			a.Partial = append(a.Partial, PartialCommit{Commit: c, Dispatch: d})
		}
	}
	a.othersAfterCheckpoint(in, v, unplaced, end)
}

// othersCommit reports whether commit c, which d's window holds, is rather the
// work of another session's dispatch whose window holds it too. Every such
// window is asked, and the one whose context shares the most words with the
// commit is the other session's claim (the first of a tie): an unrelated
// dispatch left in flight keeps its window open to now, so the first window
// alone may not be the one that made the commit. The commit is the other
// session's when it names that claim's task and not d's (crash simulator seed
// 35677: the claim a replay rebuilt from the manifest, whose context holds no
// word of the work), else unless it names d's task or shares more words with
// d's task than with that claim (a commit with no evidence either way is the other
// session's: its window is the only claim on it not made by a dispatch of this
// run that never finished).
func (a *Analysis) othersCommit(in Input, v *verifier, c pipeline.Commit, d *pipeline.Dispatch, now time.Time) (pipeline.OtherDispatch, bool) {
	claim, claimWords, named, found := othersClaim(in, c, now)
	if !found {
		return pipeline.OtherDispatch{}, false
	}
	if d.Task != nil && v.attributed().namesTask(c, *d.Task) {
		return claim, false
	}
	if named {
		return claim, true // it names the other dispatch's task, not d's
	}
	ours := 0
	if in.Describe != nil {
		ours = len(sharedWords(wordsOf(in.Describe(d)), c.Message))
	}
	if ours == claimWords && (a.wantedByIdle(v, c) || (claimWords == 0 && a.lostHolds(in, v, c))) {
		return claim, false
	}
	return claim, ours <= claimWords
}

// lostHolds reports whether commit c may be the work of a mutating dispatch of
// this run left in flight whose instructions are lost (no word to read: its
// dispatch file gone, no text of its task in the plan, and no other dispatch
// file of its task: pipeline.Describe) and that was
// dispatched, by its header time or else the manifest's order (placeUntimed),
// before c was made. Words rule out a dispatch whose instructions are read and
// share none with c, this run's or another session's, alike; they cannot rule
// out one whose instructions are lost, so on a tie at no word c stays this
// run's (crash simulator seed 20171: task 6, its file gone, in flight beside
// readable tasks; its commit, named by no task, came after another session's
// implementer was dispatched, which shares no word with it either; kept as
// that session's work, the redo did task 6 again on top).
func (a *Analysis) lostHolds(in Input, v *verifier, c pipeline.Commit) bool {
	if in.Describe == nil {
		return false
	}
	tol := time.Duration(a.Profile.CommitWindowToleranceS) * time.Second
	for _, it := range a.Items {
		d := it.Attempts[len(it.Attempts)-1]
		if d.Class != templates.RoleMutating || d.Done() {
			continue
		}
		start := d.Time
		if start.IsZero() {
			start = d.Placed
		}
		if start.IsZero() || c.Time.Before(start.Add(-tol)) || len(wordsOf(in.Describe(d))) > 0 || v.attributed().namesOtherTask(c, d) {
			continue
		}
		return true
	}
	return false
}

// wantedByIdle reports whether commit c lies in the window of a completed
// mutating dispatch of this run that the attribution gave no commit (several
// of this run's dispatches hold it without evidence, so no matching is
// essential): that dispatch needs a commit, another session's dispatch in
// flight does not, so on a tie of words c stays this run's (crash simulator
// seed 13845: a re-dispatched task 3 completed in no time beside tasks 4 and 5
// in flight; its commit, named by no task and no word, went to the other
// session's implementer in flight for hours, and task 3 was done twice).
func (a *Analysis) wantedByIdle(v *verifier, c pipeline.Commit) bool {
	at := v.attributed()
	for _, d := range a.Dispatches {
		if d.Class != templates.RoleMutating || !d.Done() || (v.superseded != nil && v.superseded(d)) {
			continue
		}
		if _, has := at.Assigned[d.Seq]; has {
			continue
		}
		for _, k := range at.Candidates[d.Seq] {
			if k.Hash == c.Hash {
				return true
			}
		}
	}
	return false
}

// othersClaim returns the other sessions' dispatch whose window holds commit c
// and whose context shares the most words with it (the first of a tie), with
// that count; a dispatch whose task c names comes before any that it does not
// (named says so). found is false when no window holds it.
func othersClaim(in Input, c pipeline.Commit, now time.Time) (claim pipeline.OtherDispatch, words int, named, found bool) {
	for _, o := range in.Others {
		if !o.Window(c.Time, now) {
			continue
		}
		n, nm := len(sharedWords(wordsOf(o.Context), c.Message)), namesOthersTask(c, o)
		if !found || (nm && !named) || (nm == named && n > words) {
			claim, words, named, found = o, n, nm, true
		}
	}
	return claim, words, named, found
}

// namesOthersTask reports whether commit c names the task of o, another
// session's dispatch.
func namesOthersTask(c pipeline.Commit, o pipeline.OtherDispatch) bool {
	return o.Task != nil && slices.Contains(taskNumbersOf(c.Message), strconv.Itoa(*o.Task))
}

// unplaced returns this run's mutating dispatches that the resume redoes and
// that no window places (their dispatch file gone, the manifest's order
// bounding none): no window of this run can hold their commits.
func (a *Analysis) unplaced(v *verifier) []*pipeline.Dispatch {
	var out []*pipeline.Dispatch
	for _, d := range a.Redo {
		if d.Class == templates.RoleMutating && !v.hasWindow(d) {
			out = append(out, d)
		}
	}
	return out
}

func (a *Analysis) addOthersWork(c pipeline.Commit, o pipeline.OtherDispatch) {
	for _, w := range a.OthersWork {
		if w.Commit.Hash == c.Hash {
			return
		}
	}
	a.OthersWork = append(a.OthersWork, OtherCommit{Commit: c, Dispatch: o})
	a.warn(fmt.Sprintf("commit %s %q lies in the window of seq %d %s of session %s (another run of this project): it is that session's work, not a partial commit of this run",
		short(c.Hash), c.Subject(), o.Seq, o.Role, o.Session))
}

// othersAfterCheckpoint adds the commits after the checkpoint that lie in a
// dispatch window of another session, in flight or completed, and that no
// dispatch of this run claims: the restore would undo them. A completed window
// bounds its session's commits as an open one does: the other session's
// dispatch started before the checkpoint and committed after it (crash
// simulator seeds 2764, 4141, 5684), or completed after it while this run
// went on; asking only the windows still in flight, the restore undid them.
func (a *Analysis) othersAfterCheckpoint(in Input, v *verifier, unplaced []*pipeline.Dispatch, now time.Time) {
	if len(in.Others) == 0 || a.Resume.End {
		return
	}
	commits, err := in.Log.Between(a.Checkpoint.Time.Add(time.Second), now)
	if err != nil {
		return
	}
	partial := map[string]bool{}
	for _, pc := range a.Partial {
		partial[pc.Commit.Hash] = true
	}
	owner := v.attributed().Owner
	for _, c := range commits {
		if _, ours := owner[c.Hash]; ours || partial[c.Hash] {
			continue
		}
		claim, words, named, found := othersClaim(in, c, now)
		if found && words == 0 && !named && (a.wantedByIdle(v, c) || a.lostHolds(in, v, c)) {
			continue
		}
		if found && !a.unplacedClaims(in, unplaced, c, claim) {
			a.addOthersWork(c, claim)
		}
	}
}

// unplacedClaims reports whether commit c, which claim's window (another
// session's dispatch) holds, is rather the work of one of this run's unplaced
// dispatches (Analysis.unplaced): no window of this run can hold their commit,
// so only its words can tell. It is theirs when it names such a dispatch's
// task and claim's context names no task of that number, or when it shares
// more words with such a dispatch's instructions and role (its task's text in
// the plan included, or, its own instructions lost, what the run's other
// dispatch files of its task say: seed 25851) than with claim's context and
// role (crash simulator seeds
// 3430 and 3056: the
// plan-writer's "docs(plan-writer): write the implementation plan" and task 2's
// "feat: task 2 webhook retries ...", their dispatch files gone, lay in the
// other session's fixer's window; kept as that session's work, the redo did
// them again on top). Such a commit is neither the other session's nor a
// partial commit of the dispatch whose window holds it: the restore undoes it
// and the redo makes it again. A tie stays the other session's: its window is
// the only evidence that places the commit.
func (a *Analysis) unplacedClaims(in Input, unplaced []*pipeline.Dispatch, c pipeline.Commit, claim pipeline.OtherDispatch) bool {
	claimWords := len(sharedWords(wordsOf(claim.Context+"\n"+claim.Role), c.Message))
	theirTasks := taskNumbersOf(claim.Context)
	for _, d := range unplaced {
		if d.Task != nil && slices.Contains(taskNumbersOf(c.Message), strconv.Itoa(*d.Task)) && !slices.Contains(theirTasks, strconv.Itoa(*d.Task)) {
			return true
		}
		desc := d.Role
		if in.Describe != nil {
			desc = in.Describe(d) + "\n" + d.Role
		}
		if len(sharedWords(wordsOf(desc), c.Message)) > claimWords {
			return true
		}
	}
	return false
}
