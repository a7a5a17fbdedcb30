package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// Symptom 5, found by the crash simulator's "two live sessions" shape (seed
// 151): the other session has more than one dispatch whose window holds the
// commit, an unrelated one first (a scanner left in flight: its window is open
// to now) and the fixer that made it. The commit shares a word or two with
// this run's in-flight task, none with the scanner's context and most with the
// fixer's: it is the fixer's work. Asking the first window alone, the plan
// charged it to this run's in-flight dispatch as a partial commit, and the
// restore undid the other session's work without refusing.
func TestIssue36OtherSessionsCommitJudgedAgainstEveryWindow(t *testing.T) {
	t.Parallel()
	p := build(t)
	other := "1775437000"
	start := fixture.Start.Add(8100 * time.Second)
	dir := filepath.Join(p.Tmp, "crucible-dispatch-"+other)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(seq int, role, phase, body string, at time.Time) {
		h := manifest.DispatchHeader{Template: role, Pipeline: "debugging", Phase: phase, Timestamp: at, DispatchDir: dir + "/"}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s.md", seq, role)), manifest.FormatDispatchFile(h, []byte(body)), 0o644))
	}
	write(1, "scanner", "1", "Scan the billing package for injection bugs.\n", start.Add(-time.Hour))
	write(2, "fixer", "3", "Fix the audit log entry written for failed logins: the entry drops the user id. Commit your work.\n", start)
	lines := `{"seq":1,"file":"1-scanner.md","role":"scanner","phase":"1","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":50,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n" +
		`{"seq":2,"file":"2-fixer.md","role":"fixer","phase":"3","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":60,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(lines), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, manifest.DispatchActivePrefix+other), []byte("dispatch-dir: "+dir+"/\nseq: 2\n"), 0o644))
	fix := commitAt(t, p.Project, "internal/audit/entry.go", "fix: audit log entry for failed logins keeps the user id", start.Add(5*time.Minute))

	_, a := decideFixture(t, p)
	var bad problems
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != fix, "the other session's commit %s is charged to seq %d as a partial commit", fix[:8], pc.Dispatch.Seq)
	}
	owned := false
	for _, w := range a.OthersWork {
		owned = owned || (w.Commit.Hash == fix && w.Dispatch.Seq == 2)
	}
	bad.check(owned, "the other session's commit %s is not its fixer's work (others' work %v)", fix[:8], a.OthersWork)
	issue36Verdict(t, "two-sessions-first-window", bad)
}

// Crash simulator seeds 2764, 4141, 5684 and others (two live sessions): the
// other session's dispatch started before this run's checkpoint, completed
// after it, and committed in between; the restore of that checkpoint undid the
// commit, its work lost from the branch (kept only by the pre-restore ref).
// Only a window still in flight was asked: a completed window bounds its
// session's commits as well. A commit this run's attribution claims (its own
// completed dispatch's, inside the other's window too) stays this run's, and
// the restore undoes it.
func TestTwoSessionsCommitInTheOthersCompletedWindowIsKept(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), DurationS: dur(10), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(40), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	theirs := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(30), Message: "fix: audit log entry for failed logins keeps the user id"}
	ours := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(14), Message: "feat: task 2 rate limiter"}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 charge model"},
		ours,
		theirs,
	}
	others := []pipeline.OtherDispatch{
		{Session: "1775437000", Seq: 1, Role: "investigator", Start: at(8), End: at(9), Context: "Find why failed logins lose the user id."},
		// the fixer's window holds both commits: ours by time only
		{Session: "1775437000", Seq: 2, Role: "implementer", Start: at(9), End: at(35), Context: "Fix the audit log entry written for failed logins: the entry drops the user id. Commit your work."},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Now: at(60)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Checkpoint != nil && a.Checkpoint.Short == "22222222", "resume checkpoint %v, want pre-wave-2", a.Checkpoint)
	kept := map[string]int{}
	for _, w := range a.OthersWork {
		kept[w.Commit.Hash] = w.Dispatch.Seq
	}
	seq, ok := kept[theirs.Hash]
	bad.check(ok && seq == 2, "the other session's commit %s made in its completed fixer's window is not its work (others' work %v)", theirs.Hash[:8], a.OthersWork)
	_, stolen := kept[ours.Hash]
	bad.check(!stolen, "this run's seq 2 commit %s is taken for the other session's work", ours.Hash[:8])
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != theirs.Hash, "the other session's commit %s is charged to seq %d as a partial commit", theirs.Hash[:8], pc.Dispatch.Seq)
	}
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}

// Crash simulator seed 3430 (two live sessions): this run's completed
// implementer lost its dispatch file, so no window of this run places its
// commit, which lies in the other session's fixer's window, still in flight.
// Taken for the other session's work, the restore kept it and the redo did the
// task again on top of it (and the other session's resume then refused: this
// run's commits changed the same file). The commit's words are those of this
// run's task and none of the fixer's: it is this run's, and the restore undoes
// it. The fixer's own commit stays the other session's.
func TestTwoSessionsCommitOfOurWindowlessDispatchIsNotTheOthers(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		// its dispatch file is gone: no header time, and no dispatch after it bounds it
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), DurationS: dur(10), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	ours := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(20), Message: "feat: task 2 rate limiter for the public api"}
	theirs := pipeline.Commit{Hash: strings.Repeat("d", 40), Time: at(25), Message: "fix: parser crashes on empty input"}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 charge model"}, ours, theirs}
	others := []pipeline.OtherDispatch{
		{Session: "1775437000", Seq: 4, Role: "implementer", Start: at(12), Context: "Fix cycle 1: fix the root cause of the parser crashes on empty input."},
	}
	tasks := map[int]string{1: "Task 1: Implement the charge model.", 2: "Task 2: Implement the rate limiter for the public api."}
	describe := func(d *pipeline.Dispatch) string { return "\n" + tasks[*d.Task] }
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Describe: describe, Now: at(60)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Checkpoint != nil && a.Checkpoint.Short == "22222222", "resume checkpoint %v, want pre-wave-2", a.Checkpoint)
	bad.check(slices.Contains(seqs(a.Redo), 2), "redo %v, want seq 2 (its commit cannot be placed)", seqs(a.Redo))
	kept := map[string]bool{}
	for _, w := range a.OthersWork {
		kept[w.Commit.Hash] = true
	}
	bad.check(!kept[ours.Hash], "this run's task 2 commit %s is kept as the other session's work: the redo does the task again on top of it", ours.Hash[:8])
	bad.check(kept[theirs.Hash], "the fixer's commit %s is not the other session's work (others' work %v)", theirs.Hash[:8], a.OthersWork)
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}

// Seed 3056: the same with nothing to read of the task (no plan text): the
// commit names task 2, the unplaced dispatch's task, and the other session's
// dispatch names no task: it is this run's. When the other's instructions name
// a task 2 as well (another /build session), the number tells nothing and the
// window's claim stands.
func TestTwoSessionsCommitNamingOurUnplacedTask(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	for _, tc := range []struct {
		context string
		ours    bool
	}{
		{"Fix cycle 1: fix the root cause of the parser crashes on empty input.", true},
		{"Task 2: Implement the currency conversion cache.", false},
	} {
		ds := []*pipeline.Dispatch{
			{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
			{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), DurationS: dur(10), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		}
		cps := []pipeline.CheckpointRef{
			{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
			{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
		}
		c := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(20), Message: "feat: task 2 webhook retries with exponential backoff"}
		log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 charge model"}, c}
		others := []pipeline.OtherDispatch{{Session: "1775437000", Seq: 4, Role: "implementer", Start: at(12), Context: tc.context}}
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Now: at(60)})
		require.NoError(t, err)
		kept := false
		for _, w := range a.OthersWork {
			kept = kept || w.Commit.Hash == c.Hash
		}
		require.Equal(t, !tc.ours, kept, "other's context %q: commit naming task 2 kept as the other session's work", tc.context)
	}
}

// Crash simulator seed 9953 (two live sessions): this run's task 3, its
// dispatch file gone, has only the window the manifest's order gives it, long
// enough to hold its own commit and, 26 seconds later, the other session's
// fix-cycle commit. With nothing to read of task 3, the matching gave task 3
// the later commit (the nearer the window's end), the fix, whose words are the
// other session's fixer's; task 3's own commit, then claimed by no dispatch of
// this run, went to the other session, and the restore undid the fix while it
// kept task 3's commit: the redo did task 3 again on top and the fix was lost.
// A commit another session's window holds and whose words that session's
// dispatch shares more of than the dispatch of this run does is not a
// candidate of this run's dispatch.
func TestTwoSessionsOthersWordierClaimIsNotOurCandidate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 6, 1, 15, 40, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(1), DurationS: dur(30), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 3, Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(33), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact},
	}
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)}}
	t1 := pipeline.Commit{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 currency conversion cache with expiry"}
	ours := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(27), Message: "feat: implement the idempotency keys for payment requests"}
	theirs := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(27).Add(26 * time.Second), Message: "docs(implementer): fix cycle 2: fix the root cause of the exporter drops the last row. tdd: failing test first"}
	log := fakeLog{t1, ours, theirs}
	others := []pipeline.OtherDispatch{{Session: "1780328696", Seq: 4, Role: "implementer", Start: at(20), End: at(29),
		Context: "Fix cycle 2: fix the root cause of the exporter drops the last row. TDD: failing test first. Commit your work."}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Now: at(120)})
	require.NoError(t, err)
	kept := map[string]bool{}
	for _, w := range a.OthersWork {
		kept[w.Commit.Hash] = true
	}
	var bad problems
	bad.check(!kept[ours.Hash], "this run's task 3 commit %s is kept as the other session's work: the redo does task 3 again on top of it", ours.Hash[:8])
	bad.check(kept[theirs.Hash], "the other session's fix %s is not kept (others' work %v): the restore undoes it", theirs.Hash[:8], a.OthersWork)
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}

// Crash simulator seed 13845 (two live sessions): the wave's re-dispatches
// share one header time; tasks 2 and 3 completed in no time, 4 and 5 are in
// flight. Task 3's commit names no task and its regenerated dispatch file no
// word of it: task 3 and the in-flight 4 and 5 all hold it without evidence,
// no matching is essential, and none gets it. The other session's implementer,
// in flight for hours, shares no word with it either, and the tie gave it the
// commit: kept as its work, the redo did task 3 again on top. A completed
// dispatch of this run given no commit needs one; the other's dispatch in
// flight does not: with no word for either side, the commit stays this run's.
func TestTwoSessionsTieGoesToOurCompletedDispatchWithoutACommit(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 2, 25, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	zero := 0.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(400), DurationS: &zero, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(400), DurationS: &zero, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(4), Time: at(400), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
		{Seq: 4, Role: "build-implementer", Phase: "3", Task: intp(5), Time: at(400), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-2", Time: at(50)}}
	t2 := pipeline.Commit{Hash: strings.Repeat("a", 40), Time: at(400), Message: "feat: task 2 audit log of admin actions"}
	t3 := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(400), Message: "feat: implement the ledger reconciliation job for nightly drift"}
	others := []pipeline.OtherDispatch{{Session: "1771983135", Seq: 3, Role: "implementer", Start: at(100),
		Context: "Fix cycle 1: fix the root cause of the parser crashes on empty input. TDD: failing test first."}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: fakeLog{t2, t3}, Others: others, Now: at(800)})
	require.NoError(t, err)
	for _, w := range a.OthersWork {
		require.NotEqual(t, t3.Hash, w.Commit.Hash, "task 3's commit is kept as the other session's work: the redo does task 3 again on top of it")
	}
}

// Crash simulator seed 35677 (two live sessions): the other session's
// implementer of task 1 lost its dispatch file, and its resume re-dispatched
// it from the manifest alone (a context that says which task and nothing
// more); its commit "task 1 refund endpoint ..." lies in that replay's window
// and in this run's fixer's, in flight. The fixer's instructions share words
// with the commit, the rebuilt context almost none, so the commit was charged
// to the fixer as a partial commit and the restore undid task 1 for good. A
// commit that names the task of the other session's dispatch whose window
// holds it, and not a task of this run's dispatch, is that dispatch's work,
// whatever the words.
func TestTwoSessionsCommitNamingTheOthersTaskIsTheirs(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	theirs := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(30), Message: "feat: task 1 refund endpoint for partial refunds against settled charges"}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 charge model"},
		theirs,
	}
	bodies := map[int]string{1: "Task 1: Implement the charge model.", 2: "Task 2: Fix the refunds of settled charges that fail with a currency mismatch."}
	others := []pipeline.OtherDispatch{
		{Session: "1775437000", Seq: 5, Role: "build-implementer", Task: intp(1), Start: at(29), End: at(31), Context: "Regenerated by replay from the manifest: role build-implementer, phase 3, task 1 (original seq 4)."},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Now: at(60),
		Describe: func(d *pipeline.Dispatch) string { return bodies[d.Seq] }})
	require.NoError(t, err)
	var bad problems
	found := false
	for _, w := range a.OthersWork {
		found = found || w.Commit.Hash == theirs.Hash
	}
	bad.check(found, "the other session's task 1 commit is not its work (others' work %v)", a.OthersWork)
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != theirs.Hash, "the other session's task 1 commit is charged to seq %d as a partial commit", pc.Dispatch.Seq)
	}
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}

// Crash simulator seeds 17081 and 20646 (two live sessions): this run's task 3,
// its dispatch file gone, completed while tasks 1, 2 and 4 of its wave were in
// flight; its completion line is the manifest's last, so no later dispatch
// bounds it, and it had no window at all. Its commit, named by no task and no
// word of anything on disk, lay in the window of the other session's
// implementer in flight, which shares no word with it either: the tie kept it
// as that session's work and the redo did task 3 again on top. The manifest's
// order still bounds when task 3 was dispatched (before task 4's header time)
// and its completion line how long it ran: it ended by then plus its duration,
// a window that holds its commit.
func TestTwoSessionsUntimedDispatchEndsByItsDuration(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 10, 6, 2, 17, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 1, Line: 1}},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(2), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 2, Line: 2}},
		// its dispatch file is gone: no header time; completed last
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(3), DurationS: dur(6), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 3, Line: 5}},
		{Seq: 4, Role: "build-implementer", Phase: "3", Task: intp(4), Time: at(3), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 4, Line: 4}},
	}
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)}}
	ours := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(8), Message: "feat: implement the rate limiter for the public api"}
	theirs := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(30), Message: "fix: guard the parser against empty input"}
	others := []pipeline.OtherDispatch{{Session: "1791253160", Seq: 3, Role: "implementer", Start: at(7),
		Context: "Fix cycle 1: fix the root cause of the parser crashes on empty input. TDD: failing test first."}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: fakeLog{theirs, ours}, Others: others, Now: at(60)})
	require.NoError(t, err)
	kept := map[string]bool{}
	for _, w := range a.OthersWork {
		kept[w.Commit.Hash] = true
	}
	var bad problems
	bad.check(slices.Contains(seqs(a.Redo), 3), "redo %v, want seq 3 (its wave is redone)", seqs(a.Redo))
	bad.check(!kept[ours.Hash], "this run's task 3 commit %s is kept as the other session's work: the redo does task 3 again on top of it", ours.Hash[:8])
	bad.check(kept[theirs.Hash], "the other session's fix %s, after task 3 ended, is not kept (others' work %v): the restore undoes it", theirs.Hash[:8], a.OthersWork)
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}

// Crash simulator seed 20171 (two live sessions): this run's task 6, its
// dispatch file gone and no plan text of it, was left in flight beside tasks 2
// (readable, in flight) and 5 (completed with its commit); its commit, named by
// no task, came after the other session's implementer was dispatched, and that
// implementer, in flight too, shares no word with it; neither does task 2's
// text. The tie kept it as the other session's work, and the redo did task 6
// again on top. Words rule out a dispatch whose instructions are read and share
// none with a commit as much as they rule out the other's; they cannot rule out
// a dispatch of this run whose instructions are lost and whose place in the
// manifest puts its start before the commit: the commit stays this run's. With
// task 6's text on disk, nothing is lost and the tie stays the other's.
func TestTwoSessionsTieGoesToOurInFlightDispatchWithLostInstructions(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 19, 19, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	for _, tc := range []struct {
		task6 string
		ours  bool
	}{
		{"", true},
		{"Task 6: Implement the webhook retries with exponential backoff.", false},
	} {
		ds := []*pipeline.Dispatch{
			{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(20), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 1, Line: 1}},
			// its dispatch file is gone: no header time, in flight
			{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(6), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 2, Line: 2}},
			{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(5), Time: at(24), DurationS: dur(8), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 3, Line: 4}},
		}
		cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-2", Time: at(19)}}
		t5 := pipeline.Commit{Hash: strings.Repeat("a", 40), Time: at(31), Message: "feat: task 5 idempotency keys for payment requests"}
		ours := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(36), Message: "feat: implement the rate limiter for the public api"}
		theirs := pipeline.Commit{Hash: strings.Repeat("c", 40), Time: at(50), Message: "docs(implementer): fix cycle 2: fix the root cause of the exporter drops the last row"}
		others := []pipeline.OtherDispatch{{Session: "1773947799", Seq: 4, Role: "implementer", Start: at(34),
			Context: "Fix cycle 2: fix the root cause of the exporter drops the last row. TDD: failing test first."}}
		tasks := map[int]string{2: "Task 2: Implement the charge model with amount validation and currency rounding.", 5: "Task 5: Implement the idempotency keys for payment requests.", 6: tc.task6}
		describe := func(d *pipeline.Dispatch) string { return "\n" + tasks[*d.Task] }
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: fakeLog{theirs, ours, t5}, Others: others, Describe: describe, Now: at(120)})
		require.NoError(t, err)
		kept := map[string]bool{}
		for _, w := range a.OthersWork {
			kept[w.Commit.Hash] = true
		}
		var bad problems
		bad.check(slices.Contains(seqs(a.Redo), 2), "task 6 %q: redo %v, want seq 2", tc.task6, seqs(a.Redo))
		bad.check(kept[ours.Hash] != tc.ours, "task 6 %q: the commit %s kept as the other session's work: %v, want %v", tc.task6, ours.Hash[:8], kept[ours.Hash], !tc.ours)
		bad.check(kept[theirs.Hash], "task 6 %q: the other session's fix %s is not kept (others' work %v): the restore undoes it", tc.task6, theirs.Hash[:8], a.OthersWork)
		if len(bad) > 0 {
			t.Fatalf("%s", strings.Join(bad, "\n"))
		}
	}
}

// Crash simulator seed 25851 (two live sessions, no plan in the project):
// task 3's first attempt (seq 3) failed, and its retry (seq 4) completed, its
// dispatch file gone: the manifest's order places its start and nothing after
// it bounds its end, so no window of this run holds its commit "feat:
// implement the audit log of admin actions", which lies in the window of the
// other session's fixer (no word in common) and in this run's task 2 in
// flight (none either). With no word of its own to read, the retry lost the
// tie to the other session, the restore kept the commit, and the redo did
// task 3 again on top. The failed attempt's file says what task 3 is: a
// dispatch whose instructions are lost is described by its task's other
// dispatch files (pipeline.Describe), and the commit is the retry's, undone
// by the restore and made again by the redo.
func TestTwoSessionsRetryWhoseFileIsGoneIsDescribedByItsTask(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	dir := t.TempDir()
	file := func(seq, task int, body string, when time.Time) string {
		h := manifest.DispatchHeader{Template: "build-implementer", Pipeline: "build", Phase: "3", Task: strconv.Itoa(task), Timestamp: when, DispatchDir: dir + "/"}
		path := filepath.Join(dir, fmt.Sprintf("%d-build-implementer.md", seq))
		require.NoError(t, os.WriteFile(path, manifest.FormatDispatchFile(h, []byte("You are the build-implementer.\n## Context\n"+body+"\n")), 0o644))
		return path
	}
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 3}},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(11), DurationS: dur(1), Recorded: true, Status: manifest.StatusFailed, Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: 3, FirstLine: 4, Line: 5}},
		{Seq: 4, Role: "build-implementer", Phase: "3", Task: intp(3), DurationS: dur(9), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: 4, FirstLine: 6, Line: 7}},
	}
	pl := &pipeline.Pipeline{ProjectDir: t.TempDir(), Dispatches: ds, Files: map[int]string{
		1: file(1, 1, "Task 1: Implement the tax calculation per region.", at(1)),
		2: file(2, 2, "Task 2: Implement the receipt PDF rendering.", at(11)),
		3: file(3, 3, "Task 3: Implement the audit log of admin actions.", at(11)),
	}}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	audit := pipeline.Commit{Hash: strings.Repeat("b", 40), Time: at(18), Message: "feat: implement the audit log of admin actions"}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1 tax calculation per region"}, audit}
	others := []pipeline.OtherDispatch{
		{Session: "1775437000", Seq: 3, Role: "implementer", Start: at(12), End: at(20), Context: "Fix cycle 1: fix the root cause of refunds of EUR charges fail with a currency mismatch."},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Others: others, Now: at(60),
		Describe: pl.Describe, HasContext: pl.HasContext})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	require.Equal(t, "pre-wave-2", a.Checkpoint.Reason)
	var bad problems
	for _, w := range a.OthersWork {
		bad.check(w.Commit.Hash != audit.Hash, "task 3's commit is kept as the other session's work: the redo does task 3 again on top of it")
	}
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != audit.Hash, "task 3's commit is charged to seq %d as a partial commit", pc.Dispatch.Seq)
	}
	if len(bad) > 0 {
		t.Fatalf("%s", strings.Join(bad, "\n"))
	}
}
