package ab

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// ce builds one synthetic manifest entry for the comparison tests.
type ce struct {
	seq      int
	role     string
	phase    string
	task     int // 0: none
	status   manifest.Status
	dur      float64
	summary  string
	of       int    // replay_of, 0: none
	session  string // replay_session, "": original
	mutation string
}

func (c ce) entry() manifest.Entry {
	e := manifest.Entry{Seq: c.seq, File: "x.md", Role: c.role, Status: c.status}
	if c.phase != "" {
		e.Phase = &c.phase
	}
	if c.task != 0 {
		e.Task = &c.task
	}
	if c.dur != 0 {
		e.DurationS = &c.dur
	}
	if c.summary != "" {
		e.Summary = &c.summary
	}
	if c.of != 0 {
		e.ReplayOf = &c.of
	}
	if c.session != "" {
		e.ReplaySession = &c.session
	}
	if c.mutation != "" {
		e.Mutation = &c.mutation
	}
	return e
}

var t0 = time.Date(2026, 4, 5, 23, 0, 0, 0, time.UTC)

// syntheticRun is a small original run (seq 1-8) and two replay sessions: "old"
// (seq 9) and "ab" (seq 10-16) resuming at seq 4 with a stricter reviewer.
func syntheticRun() ([]manifest.Entry, map[int]time.Time) {
	const c, f = manifest.StatusCompleted, manifest.StatusFailed
	m := "build-reviewer-prompt.md -> stricter.md"
	spec := []ce{
		{seq: 1, role: "red-team", phase: "1", status: c, dur: 60, summary: "2 findings"},
		{seq: 2, role: "plan-writer", phase: "2", status: c, dur: 120, summary: "Plan"},
		{seq: 3, role: "red-team", phase: "2", status: c, dur: 60, summary: "Plan holds"},
		{seq: 4, role: "build-implementer", phase: "3", task: 2, status: c, dur: 600, summary: "Task 2 done"},
		{seq: 5, role: "build-implementer", phase: "3", task: 1, status: c, dur: 600, summary: "Task 1 done"},
		{seq: 6, role: "build-reviewer", phase: "3", task: 1, status: c, dur: 100, summary: "Task 1 PASS"},
		{seq: 7, role: "build-reviewer", phase: "3", task: 2, status: c, dur: 100, summary: "Task 2 PASS"},
		{seq: 8, role: "adversarial-tester", phase: "3", task: 1, status: c, dur: 200, summary: "4 tests, 0 failed"},
		{seq: 9, role: "build-implementer", phase: "3", task: 2, status: c, dur: 50, summary: "Task 2 done", of: 4, session: "old"},
		{seq: 10, role: "build-implementer", phase: "3", task: 2, status: c, dur: 500, summary: "Task 2 done", of: 4, session: "ab"},
		{seq: 11, role: "build-implementer", phase: "3", task: 1, status: c, dur: 500, summary: "Task 1 done", of: 5, session: "ab"},
		{seq: 12, role: "build-reviewer", phase: "3", task: 1, status: f, dur: 150, summary: "Task 1 FAIL: 2 blocking findings", of: 6, session: "ab", mutation: m},
		{seq: 13, role: "build-implementer", phase: "3", task: 1, status: c, dur: 300, summary: "Task 1 fix round", session: "ab"},
		{seq: 14, role: "build-reviewer", phase: "3", task: 1, status: c, dur: 120, summary: "Task 1 PASS after fixes", of: 6, session: "ab", mutation: m},
		{seq: 15, role: "build-reviewer", phase: "3", task: 2, status: f, dur: 120, summary: "Task 2 rejected", of: 7, session: "ab", mutation: m},
		{seq: 16, role: "red-team", phase: "3", status: c, dur: 60, summary: "no findings", session: "ab"},
	}
	var entries []manifest.Entry
	times := map[int]time.Time{}
	for i, s := range spec {
		entries = append(entries, s.entry())
		at := t0.Add(time.Duration(i) * 10 * time.Minute)
		if s.session != "" {
			at = t0.Add(48*time.Hour + time.Duration(i)*5*time.Minute)
		}
		if s.seq != 3 { // seq 3 has no header timestamp: it inherits seq 2's for ordering
			times[s.seq] = at
		}
	}
	return entries, times
}

func buildProfile(t *testing.T) *templates.Profile {
	t.Helper()
	p, err := templates.Load("build")
	require.NoError(t, err)
	return p
}

func TestCompareSynthetic(t *testing.T) {
	t.Parallel()
	entries, times := syntheticRun()
	c, err := Compare(CompareInput{Profile: buildProfile(t), Entries: entries, Times: times, Original: "s0"})
	require.NoError(t, err)

	assert.Equal(t, "ab", c.ReplaySession, "newest session = session of the highest replay seq")
	assert.Equal(t, []string{"old", "ab"}, c.Sessions)
	assert.Equal(t, []string{"build-reviewer-prompt.md -> stricter.md"}, c.Mutations, "taken from the replay entries")
	assert.Equal(t, 4, c.ResumeSeq)
	assert.Equal(t, 5, c.Reexecuted)
	assert.Len(t, c.Replay, 7)

	type row struct{ orig, repl, retry int }
	var rows []row
	for _, d := range c.Dispatches {
		r := row{retry: d.RetryOf}
		if d.Original != nil {
			r.orig = d.Original.Seq
		}
		if d.Replayed != nil {
			r.repl = d.Replayed.Seq
		}
		rows = append(rows, r)
	}
	assert.Equal(t, []row{{4, 10, 0}, {5, 11, 0}, {6, 14, 0}, {7, 15, 0}, {8, 0, 0}, {0, 12, 6}, {0, 13, 0}, {0, 16, 0}}, rows)

	assert.Equal(t, 8, c.OriginalRun.Dispatches)
	assert.Equal(t, 3+7, c.Replayed.Dispatches, "shared seq 1-3 plus 7 replay entries")
	assert.Equal(t, 2, c.OriginalRun.GateRounds)
	assert.Equal(t, 3, c.Replayed.GateRounds)
	assert.Equal(t, map[string]int{"1": 1, "2": 1, "3": 1}, c.Replayed.GatesByPhase)
	assert.Equal(t, map[string]int{"1": 1, "2": 2, "3": 5}, c.OriginalRun.DispatchesByPhase)

	require.True(t, c.OriginalRun.DurationKnown)
	assert.Equal(t, 40*time.Minute+200*time.Second, c.OriginalRun.Duration, "from the resume point: seq 4 start to seq 8 end")
	require.True(t, c.Replayed.DurationKnown)
	// The replay's own time only: seq 10 (idx 9) start to seq 16 (idx 15) end; the
	// shared seq 1-3 did not run again.
	assert.Equal(t, 30*time.Minute+60*time.Second, c.Replayed.Duration)

	assert.Equal(t, "PASS", c.OriginalRun.Outcome)
	assert.Equal(t, "FAIL", c.Replayed.Outcome, "task 2's review was rejected")

	require.NotNil(t, c.Divergence)
	assert.Equal(t, 6, c.Divergence.Original.Seq, "seq 4 and 5 are the same; 6 changed its summary")
	assert.Equal(t, "summary", c.Divergence.Reason)
	var down []int
	for _, e := range c.Divergence.Downstream {
		down = append(down, e.Seq)
	}
	assert.Equal(t, []int{7, 8}, down)

	d := c.Report(ArtifactStats{})
	assert.Nil(t, d.ArtifactDiff)
	assert.Equal(t, 43, *d.Metrics.OriginalDurationM)
	assert.Equal(t, 31, *d.Metrics.ReplayedDurationM)
	require.Len(t, d.Dispatches, 8)
	assert.Equal(t, "=", d.Dispatches[0].SummaryDelta)
	assert.Equal(t, `+"after fixes"`, d.Dispatches[2].SummaryDelta)
	assert.Equal(t, "not re-run", d.Dispatches[4].SummaryDelta)
	assert.Equal(t, "earlier attempt at 6: Task 1 FAIL: 2 blocking findings", d.Dispatches[5].SummaryDelta)
	assert.Equal(t, "new: Task 1 fix round", d.Dispatches[6].SummaryDelta)
	assert.Equal(t, "build-reviewer-prompt.md -> stricter.md", d.Dispatches[2].Mutation)
	require.NotNil(t, d.FirstDivergence)
	assert.Equal(t, 14, d.FirstDivergence.ReplayedSeq)
	assert.Len(t, d.Phases, 4)
	assert.Equal(t, "Execute", d.Phases[2].Name)
	assert.Equal(t, 7, d.Phases[2].ReplayedDispatches)
}

func TestCompareSessions(t *testing.T) {
	t.Parallel()
	entries, times := syntheticRun()
	p := buildProfile(t)

	c, err := Compare(CompareInput{Profile: p, Entries: entries, Times: times, Session: "old", Mutations: []string{"a -> b"}})
	require.NoError(t, err)
	assert.Equal(t, "old", c.ReplaySession)
	assert.Equal(t, []string{"a -> b"}, c.Mutations)
	assert.Equal(t, 4, c.ResumeSeq)
	require.NotNil(t, c.Divergence)
	assert.Equal(t, 5, c.Divergence.Original.Seq, "seq 5 was not re-run by the old session")
	assert.Equal(t, "not re-run", c.Divergence.Reason)

	_, err = Compare(CompareInput{Profile: p, Entries: entries, Times: times, Session: "nope"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoReplay))
	assert.Contains(t, err.Error(), `no entry has replay_session "nope"; sessions in the manifest: old, ab`)

	_, err = Compare(CompareInput{Profile: p, Entries: entries[:8], Times: times})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoReplay))
	assert.Contains(t, err.Error(), "run an A/B replay (--mutate) first")

	_, err = Compare(CompareInput{Entries: entries})
	assert.Error(t, err)
}

func TestCompareNoDivergenceAndNewOnly(t *testing.T) {
	t.Parallel()
	const c = manifest.StatusCompleted
	p := buildProfile(t)
	same := []manifest.Entry{
		ce{seq: 1, role: "cleanup", phase: "3", task: 1, status: c, summary: "ok"}.entry(),
		ce{seq: 2, role: "cleanup", phase: "3", task: 1, status: c, summary: " ok ", of: 1, session: "r"}.entry(),
	}
	cmp, err := Compare(CompareInput{Profile: p, Entries: same})
	require.NoError(t, err)
	assert.Nil(t, cmp.Divergence)
	assert.False(t, cmp.OriginalRun.DurationKnown, "no header times")
	assert.Equal(t, "UNKNOWN", cmp.OriginalRun.Outcome)
	d := cmp.Report(ArtifactStats{From: "a", To: "b", FilesChanged: 1})
	assert.Nil(t, d.Metrics.OriginalDurationM)
	assert.Equal(t, 1, d.ArtifactDiff.FilesChanged)

	newOnly := []manifest.Entry{
		ce{seq: 1, role: "cleanup", phase: "3", task: 1, status: c, summary: "ok"}.entry(),
		ce{seq: 2, role: "build-reviewer", phase: "3", task: 1, status: c, summary: "PASS", session: "r"}.entry(),
		ce{seq: 3, role: "cleanup", phase: "3", task: 1, status: c, summary: "again", session: "r"}.entry(),
	}
	cmp, err = Compare(CompareInput{Profile: p, Entries: newOnly})
	require.NoError(t, err)
	assert.Equal(t, 0, cmp.ResumeSeq)
	assert.Equal(t, 3, cmp.Replayed.Dispatches, "all originals shared plus the replay's two")
	require.NotNil(t, cmp.Divergence)
	assert.Equal(t, "new dispatch", cmp.Divergence.Reason)
	assert.Equal(t, 2, cmp.Divergence.Replayed.Seq)
	require.Len(t, cmp.Divergence.Downstream, 1)
	assert.Equal(t, 3, cmp.Divergence.Downstream[0].Seq)
	assert.Equal(t, "PASS", cmp.Replayed.Outcome)
}

func TestEntryVerdict(t *testing.T) {
	t.Parallel()
	const c = manifest.StatusCompleted
	tests := []struct {
		status  manifest.Status
		summary string
		want    string
	}{
		{c, "Task 1 PASS: no blocking findings", "PASS"},
		{c, "Task 2 PASS with notes", "PASS"},
		{c, "Task 1: 4 adversarial tests, all pass", "PASS"},
		{c, "12 passed, 0 failed", "PASS"},
		{c, "no failures; approved", "PASS"},
		{c, "Plan approved", "PASS"},
		{c, "Task 1 FAIL: 2 blocking findings", "FAIL"},
		{c, "2 tests failed", "FAIL"},
		{c, "Plan rejected: task 2 lacks rotation tests", "FAIL"},
		{c, "passed review but 1 failure remains", "FAIL"},
		{c, "5 acceptance tests written, all RED", ""},
		{c, "Passport check", ""},
		{c, "", ""},
		{manifest.StatusFailed, "anything", "FAIL"},
		{manifest.StatusError, "agent timed out", "FAIL"},
		{manifest.StatusDispatched, "PASS", ""},
		{manifest.StatusSkipped, "skipped: PASS earlier", "PASS"},
	}
	for _, tt := range tests {
		t.Run(string(tt.status)+" "+tt.summary, func(t *testing.T) {
			e := manifest.Entry{Status: tt.status}
			if tt.summary != "" {
				e.Summary = &tt.summary
			}
			assert.Equal(t, tt.want, entryVerdict(e))
		})
	}
}

// stricterReviewer is the replacement template of the fixture A/B replay.
const stricterReviewer = "# Stricter Build Reviewer\n\nFail the task unless every input is validated.\n"

// appendReplay appends the entries and dispatch files of an A/B replay of the
// reference fixture: an older session "ab-0" (seq 20) and "ab-1" (seq 21-31) that
// re-executes Phase 3 from seq 11 with a stricter build reviewer.
func appendReplay(t *testing.T, p *fixture.Pipeline) {
	t.Helper()
	const c, f = manifest.StatusCompleted, manifest.StatusFailed
	mut := "build-reviewer-prompt.md -> stricter.md"
	spec := []ce{
		{seq: 20, role: "build-implementer", phase: "3", task: 3, status: manifest.StatusError, dur: 30, summary: "agent timed out", of: 19, session: "ab-0"},
		{seq: 21, role: "build-implementer", phase: "3", task: 1, status: c, dur: 880, summary: "Task 1 done: login form validation, 6 tests", of: 11, session: "ab-1"},
		{seq: 22, role: "build-implementer", phase: "3", task: 2, status: c, dur: 690, summary: "Task 2 done, 5 tests", of: 12, session: "ab-1"},
		{seq: 23, role: "cleanup", phase: "3", task: 1, status: c, dur: 240, summary: "Task 1 cleaned up: extracted validators", of: 13, session: "ab-1"},
		{seq: 24, role: "cleanup", phase: "3", task: 2, status: c, dur: 310, summary: "Task 2 cleaned up: simplified rotation", of: 14, session: "ab-1"},
		{seq: 25, role: "build-reviewer", phase: "3", task: 1, status: f, dur: 260, summary: "Task 1 FAIL: 2 blocking findings (email domain unchecked)", of: 15, session: "ab-1", mutation: mut},
		{seq: 26, role: "build-implementer", phase: "3", task: 1, status: c, dur: 400, summary: "Task 1 fix round: email domain checked", session: "ab-1"},
		{seq: 27, role: "build-reviewer", phase: "3", task: 1, status: c, dur: 210, summary: "Task 1 PASS after fix round", of: 15, session: "ab-1", mutation: mut},
		{seq: 28, role: "build-reviewer", phase: "3", task: 2, status: f, dur: 230, summary: "Task 2 FAIL: rotation not covered by tests", of: 16, session: "ab-1", mutation: mut},
		{seq: 29, role: "adversarial-tester", phase: "3", task: 1, status: c, dur: 300, summary: "Task 1: 4 adversarial tests, all pass", of: 17, session: "ab-1"},
		{seq: 30, role: "adversarial-tester", phase: "3", task: 2, status: c, dur: 300, summary: "Task 2: 3 adversarial tests, all pass", of: 18, session: "ab-1"},
		{seq: 31, role: "build-implementer", phase: "3", task: 3, status: c, dur: 620, summary: "Task 3 done: audit log, 4 tests", of: 19, session: "ab-1"},
	}
	origTemplate, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	at := p.Now
	for _, s := range spec {
		e := s.entry()
		e.File = fmt.Sprintf("%d-%s.md", s.seq, s.role)
		require.NoError(t, manifest.Append(p.ManifestPath, e))

		// The dispatch file: the original's header and context, mutated body for reviewers.
		orig, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, fmt.Sprintf("%d-%s.md", s.of, s.role)))
		if s.of == 0 {
			orig, err = os.ReadFile(filepath.Join(p.DurableDispatchDir, "11-build-implementer.md"))
		}
		require.NoError(t, err)
		h, body, err := manifest.ParseDispatchHeader(orig)
		require.NoError(t, err)
		if s.mutation != "" {
			var mode mutate.SubstituteMode
			body, mode, err = mutate.Substitute(body, origTemplate, []byte(stricterReviewer))
			require.NoError(t, err)
			require.Equal(t, mutate.ModeTemplatePrefix, mode)
		}
		h.Timestamp = at
		require.NoError(t, os.WriteFile(filepath.Join(p.DurableDispatchDir, e.File), manifest.FormatDispatchFile(*h, body), 0o644))
		at = at.Add(time.Duration(s.dur)*time.Second + time.Minute)
	}
}

// headerTimes reads the header timestamp of every dispatch file in dir.
func headerTimes(t *testing.T, dir string) map[int]time.Time {
	t.Helper()
	files, err := manifest.ReadDispatchDir(dir)
	require.NoError(t, err)
	times := map[int]time.Time{}
	for _, f := range files {
		if f.Kind != manifest.KindDispatch {
			continue
		}
		data, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		h, _, err := manifest.ParseDispatchHeader(data)
		require.NoError(t, err)
		times[f.Seq] = h.Timestamp
	}
	return times
}

func TestCompareOnReferenceFixture(t *testing.T) {
	p := e2ekit.Hermetic(t)
	before, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	appendReplay(t, p)
	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(after), string(e2ekit.WithoutTornTail(before))), "original lines untouched (a torn last line moves to its sidecar)")

	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	c, err := Compare(CompareInput{Profile: buildProfile(t), Entries: m.Entries, Original: p.SessionID,
		Times: headerTimes(t, p.DurableDispatchDir), Now: p.Now.Add(4 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, "ab-1", c.ReplaySession)
	assert.Equal(t, 11, c.ResumeSeq)
	assert.Equal(t, 19, c.OriginalRun.Dispatches)
	assert.Equal(t, 10+11, c.Replayed.Dispatches)
	assert.Equal(t, 3, c.OriginalRun.GateRounds, "red-team seq 2, 3, 10")
	assert.Equal(t, "PASS", c.OriginalRun.Outcome)
	assert.Equal(t, "FAIL", c.Replayed.Outcome)
	require.NotNil(t, c.Divergence)
	assert.Equal(t, 15, c.Divergence.Original.Seq)

	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	from, to := p.Commits["task1-impl"], p.Commits["task3-partial"]
	stats, err := ArtifactDiff(repo, from, to)
	require.NoError(t, err)
	if _, ok := testtools.GitIfPresent(t); ok {
		files, ins, del := shortstat(t, p.Project, from, to)
		assert.Equal(t, [3]int{files, ins, del}, [3]int{stats.FilesChanged, stats.Insertions, stats.Deletions})
	}

	d := c.Report(stats)
	var md strings.Builder
	require.NoError(t, report.WriteDiffMarkdown(&md, d))
	line, err := report.DiffJSONLine(d)
	require.NoError(t, err)
	compareGolden(t, "fixture.golden.md", md.String())
	compareGolden(t, "fixture.golden.jsonl", string(line)+"\n")

	jsonl := filepath.Join(p.DurableDispatchDir, "replay-diff.jsonl")
	require.NoError(t, report.AppendDiffJSONL(jsonl, line))
	written, err := os.ReadFile(jsonl)
	require.NoError(t, err)
	assert.Equal(t, string(line)+"\n", string(written))
}

var update = flag.Bool("update", false, "rewrite golden files")

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "compare", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./ab -run Compare -update to create %s", path)
	assert.Equal(t, string(want), got)
}

// TestCompareStoppedClockIsUnknown: a replay whose clock did not move (every
// header at one fixed --now, every duration 0, as under the simulated agent)
// measured no wall-clock time: its duration is unknown, never a 0 that reads as
// a speed-up; the original run's stays known.
func TestCompareStoppedClockIsUnknown(t *testing.T) {
	t.Parallel()
	entries, times := syntheticRun()
	zero := 0.0
	for i := range entries {
		if entries[i].ReplaySession != nil {
			entries[i].DurationS = &zero
			times[entries[i].Seq] = t0.Add(72 * time.Hour)
		}
	}
	c, err := Compare(CompareInput{Profile: buildProfile(t), Entries: entries, Times: times, Original: "s0"})
	require.NoError(t, err)
	assert.True(t, c.OriginalRun.DurationKnown)
	assert.False(t, c.Replayed.DurationKnown)
	d := c.Report(ArtifactStats{})
	assert.Equal(t, 43, *d.Metrics.OriginalDurationM)
	assert.Nil(t, d.Metrics.ReplayedDurationM)
}
