package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// issue36Pending lists the symptoms of issue 36 this package still shows, with
// why: each test runs in full and is skipped while it finds the symptom; one
// that no longer shows fails, so its mark goes in the commit that fixes it.
var issue36Pending = map[string]string{}

func issue36Verdict(t *testing.T, name string, problems []string) {
	t.Helper()
	if reason, pending := issue36Pending[name]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s):\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Fatalf("symptom %s no longer shows: remove it from issue36Pending (%s)", name, reason)
	}
	if len(problems) > 0 {
		t.Fatalf("%s:\n- %s", name, strings.Join(problems, "\n- "))
	}
}

type problems []string

func (p *problems) check(ok bool, format string, args ...any) {
	if !ok {
		*p = append(*p, fmt.Sprintf(format, args...))
	}
}

func intp(n int) *int { return &n }

// Symptom 1 at the decision: wave 2's original implementer completed, the
// restore of a first resume undid its commit, its replay (replay_of) completed
// with its own commit after a fresh pre-wave-2, the resumed session took
// pre-wave-3 and crashed there. The item is judged by its latest attempt: the
// resume starts at pre-wave-3 and re-executes wave 3 only.
func TestIssue36SupersededAttemptIsNotVerifiedOnItsOwn(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(12), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
		{Seq: 5, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(41), DurationS: dur(3), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, ReplayOf: 2, ReplaySession: "1775500000"},
		{Seq: 6, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(41), DurationS: dur(4), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, ReplayOf: 3, ReplaySession: "1775500000"},
		{Seq: 7, Role: "build-implementer", Phase: "3", Task: intp(4), Time: at(61), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
		{Hash: strings.Repeat("3", 40), Short: "33333333", Reason: "pre-wave-2", Time: at(40)},
		{Hash: strings.Repeat("4", 40), Short: "44444444", Reason: "pre-wave-3", Time: at(60)},
	}
	// Seq 2's commit (minute 14) was undone by the first resume's restore: not on the branch.
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1"},
		{Hash: strings.Repeat("c", 40), Time: at(43), Message: "feat: task 2"},
		{Hash: strings.Repeat("d", 40), Time: at(44), Message: "feat: task 3"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Resume.Wave == 3, "resumes at %s, want wave 3 (pre-wave-3)", a.Resume.Label())
	bad.check(fmt.Sprint(seqs(WorkItems(a))) == "[7]", "re-executes items %v, want [7]", seqs(WorkItems(a)))
	bad.check(len(a.Failures) == 0, "verification failures: %v", a.Failures)
	issue36Verdict(t, "resumed-run-crashed-again", bad)
}

// wordsRun is a run of a skill with no profile whose phases are named by words:
// survey, scan, fix; crashed in fix.
func wordsRun(t *testing.T) (*templates.Profile, []*pipeline.Dispatch, []pipeline.CheckpointRef) {
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-scan", Time: at(5)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-fix", Time: at(10)},
	}
	p := templates.Generic(templates.GenericInput{Skill: "audit", Phases: []string{"survey", "scan", "fix"},
		Marks: []templates.GenericMark{{Reason: "pre-scan", Phase: "scan", Opens: true}, {Reason: "pre-fix", Phase: "fix", Opens: true}}, Roles: []string{"surveyor", "scanner", "fixer"}})
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact},
		{Seq: 2, Role: "scanner", Phase: "scan", Time: at(6), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact},
		{Seq: 3, Role: "fixer", Phase: "fix", Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact},
	}
	return p, ds, cps
}

// Symptom 2 at the decision: --from-phase and --from-seq naming the crashed
// phase resolve to that phase's start, the point detected; a later phase is
// refused naming the flag typed.
func TestIssue36FromPhaseOfTheCrashedPhaseResolvesToItsStart(t *testing.T) {
	t.Parallel()
	var bad problems
	p, ds, cps := wordsRun(t)
	base, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps})
	require.NoError(t, err)
	for _, in := range []Input{{FromPhase: "fix"}, {FromSeq: 3}} {
		p, ds, cps := wordsRun(t)
		in.Profile, in.Dispatches, in.Checkpoints = p, ds, cps
		a, err := Analyze(in)
		bad.check(err == nil, "from-phase %q from-seq %d: %v", in.FromPhase, in.FromSeq, err)
		if err == nil {
			bad.check(a.Resume.Label() == base.Resume.Label(), "resumes at %s, want %s", a.Resume.Label(), base.Resume.Label())
		}
	}
	issue36Verdict(t, "from-phase-crashed-phase", bad)
}

// Symptom 3 at the decision: a failed task-less scan of one repository is not
// superseded by a completed scan of another (the same role and phase, other
// instructions); a retry with the same instructions still supersedes it.
func TestIssue36TasklessSamenessComesFromTheDispatchBody(t *testing.T) {
	t.Parallel()
	var bad problems
	for _, tc := range []struct {
		second     string
		superseded bool
	}{
		{"Scan repository github.com/acme/ledger for leaked secrets.", false},
		{"Scan repository github.com/acme/billing for leaked secrets.", true},
	} {
		p, ds, cps := wordsRun(t)
		one := 60.0
		failed := &pipeline.Dispatch{Seq: 2, Role: "scanner", Phase: "scan", Time: ds[1].Time, DurationS: &one, Recorded: true, Status: manifest.StatusFailed, Class: templates.RoleNonArtifact,
			Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 4}}
		ds[1].Entry = &manifest.Entry{Seq: 2, FirstLine: 3, Line: 4}
		later := &pipeline.Dispatch{Seq: 4, Role: "scanner", Phase: "scan", Time: ds[1].Time.Add(2 * time.Minute), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact,
			Entry: &manifest.Entry{Seq: 4, FirstLine: 5, Line: 6}}
		ds = []*pipeline.Dispatch{ds[0], failed, ds[2], later}
		bodies := map[int]string{2: "Scan repository github.com/acme/billing for leaked secrets.", 4: tc.second}
		a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Describe: func(d *pipeline.Dispatch) string { return bodies[d.Seq] + "\n" }})
		require.NoError(t, err)
		bad.check(a.complete(failed) == tc.superseded, "with a later scan %q: seq 2 superseded %v, want %v", tc.second, a.complete(failed), tc.superseded)
	}
	issue36Verdict(t, "taskless-superseded", bad)
}

// Symptom 5 at the decision: a second session of the project (found by its
// .dispatch-active-<sid>) has a fixer in flight whose commit lies inside this
// run's in-flight window: it is that session's evidence, not a partial commit of
// this run.
func TestIssue36OtherSessionsCommitIsNotOurPartial(t *testing.T) {
	t.Parallel()
	p := build(t)
	other := "1775437000"
	start := fixture.Start.Add(8100 * time.Second)
	dir := filepath.Join(p.Tmp, "crucible-dispatch-"+other)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	h := manifest.DispatchHeader{Template: "fixer", Pipeline: "debugging", Phase: "3", Timestamp: start, DispatchDir: dir + "/"}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-fixer.md"), manifest.FormatDispatchFile(h, []byte("Fix the null dereference in parser.Parse. Commit your work.\n")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(`{"seq":1,"file":"1-fixer.md","role":"fixer","phase":"3","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":60,"output_chars":null,"model_tier":"opus","tool_calls":null}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, manifest.DispatchActivePrefix+other), []byte("dispatch-dir: "+dir+"/\nseq: 1\n"), 0o644))
	fix := commitAt(t, p.Project, "parser/parse.go", "fix: null check in parser.Parse", start.Add(5*time.Minute))

	_, a := decideFixture(t, p)
	var bad problems
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != fix, "the other session's commit %s is charged to seq %d as a partial commit", fix[:8], pc.Dispatch.Seq)
	}
	bad.check(len(a.Partial) == 1 && a.Partial[0].Commit.Hash == p.Commits["task3-partial"].String(), "partial commits %v, want task 3's own", a.Partial)
	issue36Verdict(t, "two-sessions-one-scratch", bad)
}

// commitAt commits file (its path as content) in the project at when.
func commitAt(t *testing.T, project, file, msg string, when time.Time) string {
	t.Helper()
	repo, err := git.PlainOpen(project)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(project, filepath.Dir(file)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, file), []byte(msg+"\n"), 0o644))
	_, err = wt.Add(file)
	require.NoError(t, err)
	sig := &object.Signature{Name: "agent", Email: "agent@example.invalid", When: when}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return h.String()
}

// A replay belongs where the work it re-executes belongs. Wave 1's implementer
// (seq 1) completed; a first resume restored pre-wave-1 (its commit left the
// branch) and its replay of seq 1 (seq 3), dispatched long after the original
// pre-wave-2 checkpoint, was killed in flight. Placed by its own time the
// replay fell after pre-wave-2: that boundary was taken as complete, seq 1 was
// skipped as verified and re-executed as well (restoring pre-wave-2, whose tree
// holds seq 1's work, and doing it again). Placed with its original it blocks
// pre-wave-2: the resume starts at wave 1 and re-executes both items once. When
// the replay completed with its commit, wave 2's item alone is redone.
func TestIssue36ReplayIsPlacedWithItsOriginal(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 8, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	run := func(replayDone bool) (*Analysis, error) {
		replay := &pipeline.Dispatch{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(41), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, ReplayOf: 1, ReplaySession: "1775642400"}
		log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1"}}
		if replayDone {
			replay.Status, replay.DurationS = manifest.StatusCompleted, dur(3)
			log = fakeLog{{Hash: strings.Repeat("c", 40), Time: at(43), Message: "feat: task 1"}}
		}
		ds := []*pipeline.Dispatch{
			{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
			{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
			replay,
		}
		cps := []pipeline.CheckpointRef{
			{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
			{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
		}
		return Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	}
	var bad problems
	for _, tc := range []struct {
		replayDone bool
		wave       int
		items      string
	}{{false, 1, "[1 2]"}, {true, 2, "[2]"}} {
		a, err := run(tc.replayDone)
		require.NoError(t, err)
		bad.check(a.Resume.Wave == tc.wave, "replay completed %v: resumes at %s, want wave %d", tc.replayDone, a.Resume.Label(), tc.wave)
		bad.check(fmt.Sprint(seqs(WorkItems(a))) == tc.items, "replay completed %v: re-executes items %v, want %s", tc.replayDone, seqs(WorkItems(a)), tc.items)
		for _, s := range a.Skip {
			for _, it := range a.Items {
				bad.check(it.Dispatch.Seq != a.rootOf(s), "replay completed %v: seq %d is skipped and its work item (seq %d) re-executed", tc.replayDone, s.Seq, it.Dispatch.Seq)
			}
		}
	}
	issue36Verdict(t, "replay-placed-with-original", bad)
}

// A dispatch whose manifest line the crash tore (its dispatch file alone on
// disk) and whose replay completed with its commit is done: the replay_of link
// is the evidence that the later attempt did its work. It no longer holds back
// the boundary after it: the resume starts at wave 2 and redoes wave 2 alone
// (end-state simulator seed 79: wave 1 was redone).
func TestIssue36UnrecordedDispatchAReplayCompletedIsDone(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 9, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(40), DurationS: dur(3), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, ReplayOf: 1, ReplaySession: "1775728800"},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(51), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(50)},
	}
	log := fakeLog{{Hash: strings.Repeat("c", 40), Time: at(42), Message: "feat: task 1"}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Resume.Wave == 2, "resumes at %s, want wave 2", a.Resume.Label())
	bad.check(fmt.Sprint(seqs(WorkItems(a))) == "[3]", "re-executes items %v, want [3]", seqs(WorkItems(a)))
	issue36Verdict(t, "unrecorded-replayed", bad)
}

// An item is judged by its latest attempt when its attempts are linked by a
// retry as well as by replay_of: wave 1's implementer failed (seq 1), its retry
// completed (seq 2), a first resume's restore undid the retry's commit and
// replayed the item (seq 4, replay_of 1) with its own commit. The retry is
// superseded, not verified on its own (its commit is gone): the resume starts
// at wave 2 (end-state simulator seed 8 went back to wave 1 and redid 22 items
// where 6 were needed).
func TestIssue36RetryAReplaySupersededIsNotVerifiedOnItsOwn(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 10, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(2), Recorded: true, Status: manifest.StatusError, Class: templates.RoleMutating},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(4), DurationS: dur(3), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
		{Seq: 4, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(41), DurationS: dur(3), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, ReplayOf: 1, ReplaySession: "1775815200"},
		{Seq: 5, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(51), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
		{Hash: strings.Repeat("3", 40), Short: "33333333", Reason: "pre-wave-2", Time: at(50)},
	}
	// the retry's commit (minute 6) was undone by the first resume's restore
	log := fakeLog{{Hash: strings.Repeat("c", 40), Time: at(43), Message: "feat: task 1"}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Resume.Wave == 2, "resumes at %s, want wave 2", a.Resume.Label())
	bad.check(len(a.Failures) == 0, "verification failures: %v", a.Failures)
	issue36Verdict(t, "retry-superseded-by-replay", bad)
}

// A recorded dispatch whose dispatch file is gone has no header time, so no
// checkpoint can place it by time. Placed nowhere, it fell after pre-wave-2:
// the resume restored pre-wave-2 (which holds its work) and re-executed it,
// its work done twice (end-state simulator seed 16). It is placed as early as
// the manifest's line order allows (its predecessor's time): a boundary after
// that must prove its work, which without a timestamp it cannot, so the resume
// starts before it, names the check on that dispatch, and redoes it once.
func TestIssue36DispatchWithoutTimeIsPlacedByLineOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 11, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 1, Line: 3}},
		{Seq: 2, Role: "build-implementer", Phase: "3", Task: intp(2), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 2, Line: 4}},
		{Seq: 3, Role: "build-implementer", Phase: "3", Task: intp(3), Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating, Entry: &manifest.Entry{FirstLine: 5, Line: 5}},
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(3), Message: "feat: task 1"}, {Hash: strings.Repeat("b", 40), Time: at(4), Message: "feat: task 2"}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	var bad problems
	bad.check(a.Resume.Wave == 1, "resumes at %s, want wave 1 (seq 1's work cannot be proved without its time)", a.Resume.Label())
	bad.check(fmt.Sprint(seqs(WorkItems(a))) == "[1 2 3]", "re-executes items %v, want [1 2 3]", seqs(WorkItems(a)))
	named := false
	for _, f := range a.Failures {
		named = named || f.Seq == 1
	}
	bad.check(named, "no failed check names seq 1: %v", a.Failures)
	issue36Verdict(t, "dispatch-without-time", bad)
}
