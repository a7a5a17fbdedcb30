package ab

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

// ErrNoReplay means the manifest holds no entry of the replay session to compare.
var ErrNoReplay = errors.New("no replay entries to compare")

// CompareInput is what Compare needs: the whole deduplicated manifest (original and
// replay entries), the header timestamps of the dispatch files, and the profile.
type CompareInput struct {
	Profile *templates.Profile
	// Entries are all deduplicated entries of the manifest.
	Entries []manifest.Entry
	// Session is the replay session to compare; "" picks the newest one, the session
	// of the replay entry with the highest seq.
	Session string
	// Original names the original run in the report (its session id).
	Original string
	// Times holds the header timestamp of each dispatch file, by seq.
	Times map[int]time.Time
	// Mutations are the "ORIG -> REPL" labels; empty takes them from the replay entries.
	Mutations []string
	// Now stamps the report; zero leaves the stamp out.
	Now time.Time
}

// ComparedDispatch pairs an original dispatch with the replay entry that re-executed
// it. Original is nil for a dispatch only the replay made (a new dispatch, or an
// earlier attempt at an original one, see RetryOf); Replayed is nil for an original
// dispatch from the resume point on that the replay did not re-run.
type ComparedDispatch struct {
	Original, Replayed *manifest.Entry
	// RetryOf is the original seq an earlier replay attempt was linked to (0: none).
	RetryOf int
}

// RunMetrics are the numbers of one run taken as a whole.
type RunMetrics struct {
	Dispatches int
	GateRounds int
	// GatesByPhase and DispatchesByPhase count per phase id ("" for none).
	GatesByPhase, DispatchesByPhase map[string]int
	// Duration is the wall-clock time of the part a replay redoes (see Compare);
	// DurationKnown is false without header times.
	Duration      time.Duration
	DurationKnown bool
	// Outcome is the acceptance verdict: "PASS", "FAIL" or "UNKNOWN" (see Compare).
	Outcome string
}

// Divergence is the first compared dispatch, in dependency order, whose outcome
// differs, and the original dispatches that follow from it.
type Divergence struct {
	ComparedDispatch
	// Reason is "status", "summary", "not re-run" or "new dispatch".
	Reason     string
	Downstream []manifest.Entry
}

// Comparison is an original run compared with one replay session of it.
type Comparison struct {
	OriginalSession, ReplaySession string
	// Sessions lists every replay session of the manifest, oldest first.
	Sessions  []string
	Mutations []string
	Generated time.Time
	// Original holds the original run's entries, Replay the session's, by seq.
	Original, Replay []manifest.Entry
	// ResumeSeq is the lowest original seq a replay entry re-executes (0: none).
	// Original dispatches before it are shared by both runs.
	ResumeSeq int
	// Reexecuted counts the original dispatches from ResumeSeq on.
	Reexecuted int
	// Dispatches lists the re-executed originals in dependency order, then the
	// replay's other dispatches by seq.
	Dispatches            []ComparedDispatch
	OriginalRun, Replayed RunMetrics
	Divergence            *Divergence

	profile *templates.Profile
	times   map[int]time.Time
}

// Compare compares the original run of a manifest with one replay session.
//
// Original entries are those without replay_session. A replay entry is matched to
// the original its replay_of names; when several name the same original, the last
// is its outcome and the earlier ones are listed as retries. Each run is counted as
// a whole: the replayed run is the original's dispatches before the resume point
// plus the replay's entries. Wall-clock time compares like with like: for the
// original, from the first header timestamp at or after the resume point to the
// latest header timestamp plus duration; for the replay, the same over the replay
// session's own entries, so it is the time the replay really took (header times
// and durations are what the replay measured and recorded under its clock).
//
// Acceptance outcome rule: for every unit of work (role, phase, task) whose role is a
// test role or gate role of the profile or names a reviewer, the run's last dispatch
// of that unit decides: failed or error is FAIL; a completed summary with a fail word
// (fail, failed, failing, failure(s), reject(ed)) not preceded by "0", "no", "zero" or
// "without" is FAIL; else one with a pass word (pass, passed, passes, passing,
// approve(d)) is PASS; anything else gives no verdict. A run is FAIL when any unit
// is FAIL, PASS when some unit is PASS, and UNKNOWN otherwise.
func Compare(in CompareInput) (*Comparison, error) {
	if in.Profile == nil {
		return nil, errors.New("compare: no pipeline profile")
	}
	c := &Comparison{OriginalSession: in.Original, Generated: in.Now, profile: in.Profile, times: fillTimes(in.Entries, in.Times)}
	newest := 0
	for _, e := range in.Entries {
		if e.ReplaySession == nil {
			c.Original = append(c.Original, e)
			continue
		}
		if s := *e.ReplaySession; !slices.Contains(c.Sessions, s) {
			c.Sessions = append(c.Sessions, s)
		}
		if e.Seq > newest {
			newest, c.ReplaySession = e.Seq, *e.ReplaySession
		}
	}
	if in.Session != "" {
		c.ReplaySession = in.Session
	}
	for _, e := range in.Entries {
		if e.ReplaySession != nil && *e.ReplaySession == c.ReplaySession {
			c.Replay = append(c.Replay, e)
		}
	}
	if len(c.Replay) == 0 {
		if len(c.Sessions) == 0 {
			return nil, fmt.Errorf("%w: the manifest has no entry with a replay_session; run an A/B replay (--mutate) first", ErrNoReplay)
		}
		return nil, fmt.Errorf("%w: no entry has replay_session %q; sessions in the manifest: %s", ErrNoReplay, c.ReplaySession, strings.Join(c.Sessions, ", "))
	}
	c.Mutations = in.Mutations
	if len(c.Mutations) == 0 {
		c.Mutations = replayMutations(c.Replay)
	}
	c.match()
	c.OriginalRun = c.metrics(c.Original, nil)
	c.Replayed = c.metrics(c.shared(), c.Replay)
	c.findDivergence()
	return c, nil
}

// fillTimes gives every seq without a header timestamp the latest known timestamp of
// a lower seq, so that the dependency order has a total key.
func fillTimes(entries []manifest.Entry, times map[int]time.Time) map[int]time.Time {
	out := make(map[int]time.Time, len(entries))
	var last time.Time
	for _, e := range entries {
		if t, ok := times[e.Seq]; ok && !t.IsZero() {
			out[e.Seq] = t
			if t.After(last) {
				last = t
			}
			continue
		}
		out[e.Seq] = last
	}
	return out
}

func replayMutations(replay []manifest.Entry) []string {
	var out []string
	for _, e := range replay {
		if e.Mutation != nil && *e.Mutation != "" && !slices.Contains(out, *e.Mutation) {
			out = append(out, *e.Mutation)
		}
	}
	return out
}

// match pairs replay entries with originals and orders the compared dispatches.
func (c *Comparison) match() {
	bySeq := map[int]*manifest.Entry{}
	for i := range c.Original {
		bySeq[c.Original[i].Seq] = &c.Original[i]
	}
	last := map[int]*manifest.Entry{}
	for i := range c.Replay {
		r := &c.Replay[i]
		if r.ReplayOf == nil || bySeq[*r.ReplayOf] == nil {
			continue
		}
		if c.ResumeSeq == 0 || *r.ReplayOf < c.ResumeSeq {
			c.ResumeSeq = *r.ReplayOf
		}
		last[*r.ReplayOf] = r
	}
	if c.ResumeSeq > 0 {
		for i := range c.Original {
			if o := &c.Original[i]; o.Seq >= c.ResumeSeq {
				c.Dispatches = append(c.Dispatches, ComparedDispatch{Original: o, Replayed: last[o.Seq]})
				c.Reexecuted++
			}
		}
	}
	sort.SliceStable(c.Dispatches, func(i, j int) bool {
		return c.before(c.Dispatches[i].Original, c.Dispatches[j].Original)
	})
	for i := range c.Replay {
		r := &c.Replay[i]
		if r.ReplayOf != nil && bySeq[*r.ReplayOf] != nil {
			if last[*r.ReplayOf] == r {
				continue
			}
			c.Dispatches = append(c.Dispatches, ComparedDispatch{Replayed: r, RetryOf: *r.ReplayOf})
			continue
		}
		c.Dispatches = append(c.Dispatches, ComparedDispatch{Replayed: r})
	}
}

// shared returns the original entries the replayed run keeps: those before the
// resume point, or all of them when the replay re-executed none.
func (c *Comparison) shared() []manifest.Entry {
	if c.ResumeSeq == 0 {
		return c.Original
	}
	var out []manifest.Entry
	for _, e := range c.Original {
		if e.Seq < c.ResumeSeq {
			out = append(out, e)
		}
	}
	return out
}

// before orders two entries by dependency: phase, then header time (wave), then
// task, then seq.
func (c *Comparison) before(a, b *manifest.Entry) bool {
	if pa, pb := c.phaseRank(a), c.phaseRank(b); pa != pb {
		return pa < pb
	}
	if ta, tb := c.times[a.Seq], c.times[b.Seq]; !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ka, kb := taskRank(a), taskRank(b); ka != kb {
		return ka < kb
	}
	return a.Seq < b.Seq
}

func (c *Comparison) phaseRank(e *manifest.Entry) int {
	if e.Phase != nil {
		if i := c.profile.PhaseIndex(*e.Phase); i >= 0 {
			return i
		}
	}
	return len(c.profile.Phases)
}

func taskRank(e *manifest.Entry) int {
	if e.Task == nil {
		return -1
	}
	return *e.Task
}

// metrics counts a run made of base followed by extra.
func (c *Comparison) metrics(base, extra []manifest.Entry) RunMetrics {
	m := RunMetrics{GatesByPhase: map[string]int{}, DispatchesByPhase: map[string]int{}}
	run := append(append([]manifest.Entry{}, base...), extra...)
	for _, e := range run {
		m.Dispatches++
		m.DispatchesByPhase[phaseOf(&e)]++
		if c.profile.IsGateRole(e.Role) {
			m.GateRounds++
			m.GatesByPhase[phaseOf(&e)]++
		}
	}
	m.Outcome = c.acceptance(run)
	if extra == nil {
		m.Duration, m.DurationKnown = c.span(c.fromResumePoint(base))
		return m
	}
	// The replay's own elapsed time: its header times and recorded durations only.
	// The shared part before the resume point did not run again, so it adds nothing.
	m.Duration, m.DurationKnown = c.span(extra)
	return m
}

// fromResumePoint returns the original entries from the resume point on (all of
// them when nothing was re-executed): the part of the run a replay redoes.
func (c *Comparison) fromResumePoint(entries []manifest.Entry) []manifest.Entry {
	if c.ResumeSeq == 0 {
		return entries
	}
	var out []manifest.Entry
	for _, e := range entries {
		if e.Seq >= c.ResumeSeq {
			out = append(out, e)
		}
	}
	return out
}

func phaseOf(e *manifest.Entry) string {
	if e.Phase == nil {
		return ""
	}
	return *e.Phase
}

// start returns the earliest header timestamp of entries.
func (c *Comparison) start(entries []manifest.Entry) (time.Time, bool) {
	var first time.Time
	for _, e := range entries {
		if t := c.times[e.Seq]; !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// span is the wall-clock time of entries: earliest header timestamp to the latest
// header timestamp plus duration. It is unknown (false) when no time passed: a
// clock that did not move (a fixed --now, as the simulated agent's demo runs
// under) measured nothing, and a 0 would read as a speed-up.
func (c *Comparison) span(entries []manifest.Entry) (time.Duration, bool) {
	first, ok := c.start(entries)
	if !ok {
		return 0, false
	}
	end := first
	for _, e := range entries {
		t := c.times[e.Seq]
		if t.IsZero() {
			continue
		}
		if e.DurationS != nil && *e.DurationS > 0 && !math.IsInf(*e.DurationS, 0) {
			t = t.Add(time.Duration(*e.DurationS * float64(time.Second)))
		}
		if t.After(end) {
			end = t
		}
	}
	return end.Sub(first), end.After(first)
}

// acceptance applies the outcome rule of Compare to a run in seq order.
func (c *Comparison) acceptance(run []manifest.Entry) string {
	lastOf := map[string]manifest.Entry{}
	var keys []string
	for _, e := range run {
		if !c.bearsVerdict(e.Role) {
			continue
		}
		task := ""
		if e.Task != nil {
			task = strconv.Itoa(*e.Task)
		}
		k := e.Role + "\x00" + phaseOf(&e) + "\x00" + task
		if _, seen := lastOf[k]; !seen {
			keys = append(keys, k)
		}
		lastOf[k] = e
	}
	outcome := "UNKNOWN"
	for _, k := range keys {
		switch entryVerdict(lastOf[k]) {
		case "FAIL":
			return "FAIL"
		case "PASS":
			outcome = "PASS"
		}
	}
	return outcome
}

func (c *Comparison) bearsVerdict(role string) bool {
	return c.profile.IsTestRole(role) || c.profile.IsGateRole(role) || strings.Contains(role, "reviewer")
}

var (
	failWords    = []string{"fail", "fails", "failed", "failing", "failure", "failures", "reject", "rejects", "rejected"}
	passWords    = []string{"pass", "passes", "passed", "passing", "approve", "approves", "approved"}
	negatorWords = []string{"0", "no", "zero", "without", "none"}
)

// entryVerdict returns "PASS", "FAIL" or "" for one dispatch.
func entryVerdict(e manifest.Entry) string {
	switch e.Status {
	case manifest.StatusFailed, manifest.StatusError:
		return "FAIL"
	case manifest.StatusCompleted, manifest.StatusSkipped:
	default:
		return ""
	}
	if e.Summary == nil {
		return ""
	}
	words := strings.FieldsFunc(strings.ToLower(*e.Summary), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	pass := false
	for i, w := range words {
		if slices.Contains(failWords, w) && (i == 0 || !slices.Contains(negatorWords, words[i-1])) {
			return "FAIL"
		}
		pass = pass || slices.Contains(passWords, w)
	}
	if pass {
		return "PASS"
	}
	return ""
}

// findDivergence sets the first compared dispatch whose outcome differs.
func (c *Comparison) findDivergence() {
	for _, d := range c.Dispatches {
		if d.Original == nil {
			continue
		}
		if reason := differs(d); reason != "" {
			dv := &Divergence{ComparedDispatch: d, Reason: reason}
			for _, o := range c.Dispatches {
				if o.Original == nil || o.Original.Seq == d.Original.Seq || !c.before(d.Original, o.Original) {
					continue
				}
				sameTask := d.Original.Task != nil && o.Original.Task != nil && *d.Original.Task == *o.Original.Task
				if sameTask || phaseOf(o.Original) == phaseOf(d.Original) {
					dv.Downstream = append(dv.Downstream, *o.Original)
				}
			}
			c.Divergence = dv
			return
		}
	}
	for _, d := range c.Dispatches {
		if d.Original == nil {
			c.Divergence = &Divergence{ComparedDispatch: d, Reason: "new dispatch"}
			for _, r := range c.Replay {
				if r.Seq > d.Replayed.Seq && (phaseOf(&r) == phaseOf(d.Replayed) || sameTaskOf(&r, d.Replayed)) {
					c.Divergence.Downstream = append(c.Divergence.Downstream, r)
				}
			}
			return
		}
	}
}

func sameTaskOf(a, b *manifest.Entry) bool {
	return a.Task != nil && b.Task != nil && *a.Task == *b.Task
}

// differs says what differs between an original and its replay, or "".
func differs(d ComparedDispatch) string {
	switch {
	case d.Replayed == nil:
		return "not re-run"
	case d.Original.Status != d.Replayed.Status:
		return "status"
	case summaryText(d.Original) != summaryText(d.Replayed):
		return "summary"
	}
	return ""
}

func summaryText(e *manifest.Entry) string {
	if e == nil || e.Summary == nil {
		return ""
	}
	return strings.TrimSpace(*e.Summary)
}
