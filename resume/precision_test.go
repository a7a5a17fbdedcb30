package resume

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// A dispatch file with no manifest line never launched its agent: dispatch.py
// appends the dispatched line before the orchestrator starts the agent, so
// the file is the orchestrator's intent, not work. When a later attempt at
// the same work (same role, phase and task) completed, that intent was
// carried out and the file blocks nothing. Here wave 1's reviewer of task 1
// ended error, the orchestrator wrote the retry's file (seq 3) and crashed
// before its line; a first resume replayed seq 2 (seq 4, completed). The run
// is complete: a second resume redoes nothing (the crash simulator's seed
// 2510 redid all of wave 2 and the code review for that one file).
func TestUnrecordedFileSupersededByALaterCompletedAttempt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	mk := func() []*pipeline.Dispatch {
		return []*pipeline.Dispatch{
			{Seq: 1, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), DurationS: dur(5), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
			{Seq: 2, Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(7), DurationS: dur(2), Recorded: true, Status: manifest.StatusError, Class: templates.RoleNonArtifact},
			{Seq: 3, Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(10)},
			{Seq: 4, Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(40), DurationS: dur(2), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, ReplayOf: 2, ReplaySession: "1775500000"},
		}
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-1", Time: at(30)},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(4), Message: "feat: task 1"}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Empty(t, WorkItems(a), "resumes at %s; checks %v", a.Resume.Label(), a.Checks)
	require.Empty(t, a.Crash.Unrecorded)

	// The other side: with no later completed attempt (the replay in flight,
	// or another task's), the file is the crash point and its work is redone.
	for name, change := range map[string]func(ds []*pipeline.Dispatch){
		"replay in flight": func(ds []*pipeline.Dispatch) { ds[3].Status = manifest.StatusDispatched; ds[3].DurationS = nil },
		"other task":       func(ds []*pipeline.Dispatch) { ds[2].Task = intp(2) },
		"other role":       func(ds []*pipeline.Dispatch) { ds[2].Role = "build-implementer" },
	} {
		ds := mk()
		change(ds)
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
		require.NoError(t, err, name)
		require.NotEmpty(t, WorkItems(a), "%s: nothing redone", name)
		require.Contains(t, fmt.Sprint(seqs(a.Crash.Unrecorded)), "3", name)
	}
}

// A retry left in flight by a crash is an attempt at its item like the
// failure it retries: a first resume re-dispatched the item (a replay of its
// first attempt, which completed), so the item is done and the retry blocks
// nothing. Here wave 1's implementer of task 1 ended error, its retry (seq 3)
// was in flight at the crash; the first resume restored pre-wave-1 and
// replayed seq 2 (seq 5) and seq 4 (seq 6), then wave 2's seq 7 crashed in
// flight. A second resume starts at pre-wave-2 and redoes seq 7 only (the
// crash simulator's seed 2526 went back to pre-wave-1 and redid five items).
func TestInFlightRetrySupersededByItsItemsReplay(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	impl := func(seq, task, m int, st manifest.Status) *pipeline.Dispatch {
		d := &pipeline.Dispatch{Seq: seq, Role: "build-implementer", Phase: "3", Task: intp(task), Time: at(m), Recorded: true, Status: st, Class: templates.RoleMutating}
		if st != manifest.StatusDispatched {
			d.DurationS = dur(2)
		}
		return d
	}
	mk := func() []*pipeline.Dispatch {
		ds := []*pipeline.Dispatch{
			impl(1, 1, 1, manifest.StatusCompleted),
			impl(2, 2, 1, manifest.StatusError),
			impl(3, 2, 4, manifest.StatusDispatched),
			impl(4, 3, 1, manifest.StatusCompleted),
			impl(5, 2, 41, manifest.StatusCompleted),
			impl(6, 3, 41, manifest.StatusCompleted),
			impl(7, 4, 51, manifest.StatusDispatched),
		}
		ds[4].ReplayOf, ds[4].ReplaySession = 2, "1775500000"
		ds[5].ReplayOf, ds[5].ReplaySession = 4, "1775500000"
		return ds
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-1", Time: at(40)},
		{Hash: strings.Repeat("3", 40), Short: "33333333", Reason: "pre-wave-2", Time: at(50)},
	}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"},
		{Hash: strings.Repeat("c", 40), Time: at(42), Message: "feat: task 2"},
		{Hash: strings.Repeat("d", 40), Time: at(42), Message: "feat: task 3"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 2, a.Resume.Wave, "resumes at %s; checks %v", a.Resume.Label(), a.Checks)
	require.Equal(t, "[7]", fmt.Sprint(seqs(WorkItems(a))))
	require.Empty(t, a.Crash.InFlight[:len(a.Crash.InFlight)-1], "in flight: %v", seqs(a.Crash.InFlight))

	// The other side: the replay of the item still in flight (and no commit
	// of task 2), the item is not done and the resume goes back before it.
	ds := mk()
	ds[4].Status, ds[4].DurationS = manifest.StatusDispatched, nil
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: fakeLog{log[0], log[2]}, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "resumes at %s; checks %v", a.Resume.Label(), a.Checks)
}

// A replay a recording served called no agent: the runner re-applied the
// commits the recording holds as they were made, their times included, so
// they lie in the window of the dispatch that recorded it (its completion line
// names it: recorded_by), not in the serving replay's own window, a minute
// after the resume's --now. Here task 2's original (seq 2) was undone by a
// first resume's restore and replayed live (seq 3, commit at minute 41); a
// second resume restored again and a recording of seq 3 served its replay
// (seq 4 at minute 60, the same commit re-applied); then wave 2's seq 5
// crashed in flight. A third resume verifies seq 4 by seq 3's window and
// starts at pre-wave-2 (the crash simulator's seed 2582 failed seq 4's check,
// "no project commit in" its own window, went back to pre-wave-1 and redid
// twelve items where nothing needed redoing).
func TestServedRecordingIsVerifiedInTheRecordersWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	impl := func(seq, task, m int, st manifest.Status, d *float64) *pipeline.Dispatch {
		return &pipeline.Dispatch{Seq: seq, Template: "build-implementer", Role: "build-implementer", Phase: "3", Task: intp(task), Time: at(m), DurationS: d,
			Recorded: true, Status: st, Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: seq}}
	}
	mk := func(recordedBy string) []*pipeline.Dispatch {
		ds := []*pipeline.Dispatch{
			impl(1, 1, 1, manifest.StatusCompleted, dur(2)),
			impl(2, 2, 5, manifest.StatusCompleted, dur(2)),
			impl(3, 2, 40, manifest.StatusCompleted, dur(2)),
			impl(4, 2, 60, manifest.StatusCompleted, dur(0)),
			impl(5, 3, 70, manifest.StatusDispatched, nil),
		}
		ds[2].ReplayOf, ds[2].ReplaySession = 2, "1775500000"
		ds[3].ReplayOf, ds[3].ReplaySession = 2, "1775600000"
		if recordedBy != "" {
			ds[3].Entry.Extra = map[string]json.RawMessage{"reused": json.RawMessage("true"), RecordedByKey: json.RawMessage(strconv.Quote(recordedBy))}
		}
		return ds
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-1", Time: at(30)},
		{Hash: strings.Repeat("3", 40), Short: "33333333", Reason: "pre-wave-1", Time: at(50)},
		{Hash: strings.Repeat("4", 40), Short: "44444444", Reason: "pre-wave-2", Time: at(65)},
	}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"},
		{Hash: strings.Repeat("c", 40), Time: at(41), Message: "feat: task 2"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk("3-build-implementer"), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Empty(t, a.Failures)
	require.Equal(t, 2, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	require.Equal(t, "[5]", fmt.Sprint(seqs(WorkItems(a))))

	// The other side: a line that names no recorder (or one of another
	// template, or no dispatch of the run) is searched in its own window,
	// where no commit lies: the check fails and the resume goes back.
	for _, by := range []string{"", "3-build-reviewer", "9-build-implementer", "x"} {
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(by), Checkpoints: cps, Log: log, Now: at(90)})
		require.NoError(t, err)
		require.NotEmpty(t, a.Failures, "recorded_by %q", by)
		require.Equal(t, 4, a.Failures[0].Seq, "recorded_by %q", by)
		require.Equal(t, 1, a.Resume.Wave, "recorded_by %q: resumes at %s", by, a.Resume.Label())
	}
}

// A completed implementer whose dispatch file is gone has no header time, and
// manifest lines carry none; but dispatch.py appends each line when it
// happens, so the lines around it bound its work: after the header time of
// the latest dispatch whose first line comes before its own, before that of
// the first dispatch whose first line comes after its completion line. Here
// seq 2 (task 2, file gone) lies between seq 1 (minute 1) and seq 3 (minute
// 8), and its commit (minute 5) verifies it: the resume starts at pre-wave-2
// (the crash simulator's seed 2649 failed "no dispatch timestamp" and redid
// eight items where nothing needed redoing). Where a boundary checkpoint lies
// between the two bounds, the work could be on either side of it, and the
// check fails as before.
func TestUntimedDispatchIsBoundedByTheLinesAroundIt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	d := func(seq, task int, role string, m, first, last int, st manifest.Status) *pipeline.Dispatch {
		x := &pipeline.Dispatch{Seq: seq, Template: role, Role: role, Phase: "3", Task: intp(task), Recorded: true, Status: st,
			Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: seq, FirstLine: first, Line: last}}
		if m >= 0 {
			x.Time = at(m)
		}
		if st != manifest.StatusDispatched {
			x.DurationS = &two
		}
		if role == "build-reviewer" {
			x.Class = templates.RoleNonArtifact
		}
		return x
	}
	mk := func(reviewer bool) []*pipeline.Dispatch {
		ds := []*pipeline.Dispatch{
			d(1, 1, "build-implementer", 1, 1, 3, manifest.StatusCompleted),
			d(2, 2, "build-implementer", -1, 2, 4, manifest.StatusCompleted),
		}
		if reviewer {
			ds = append(ds, d(3, 1, "build-reviewer", 8, 5, 6, manifest.StatusCompleted))
		}
		return append(ds, d(4, 3, "build-implementer", 16, 7, 7, manifest.StatusDispatched))
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(15)},
	}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"},
		{Hash: strings.Repeat("b", 40), Time: at(5), Message: "feat: task 2"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(true), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Empty(t, a.Failures)
	require.Equal(t, 2, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	require.Equal(t, "[4]", fmt.Sprint(seqs(WorkItems(a))))

	// The other sides: no commit of task 2 in those bounds; or no line
	// between it and the pre-wave-2 checkpoint (its bounds then hold the
	// checkpoint, so its work may lie after it).
	for name, in := range map[string]Input{
		"no commit":                {Dispatches: mk(true), Log: log[:1]},
		"bounds hold a checkpoint": {Dispatches: mk(false), Log: log},
	} {
		in.Profile, in.Checkpoints, in.Now = testProfile(t), cps, at(90)
		a, err := Analyze(in)
		require.NoError(t, err)
		require.NotEmpty(t, a.Failures, name)
		require.Equal(t, 2, a.Failures[0].Seq, name)
		require.Equal(t, 1, a.Resume.Wave, "%s: resumes at %s", name, a.Resume.Label())
	}
}

// A dispatch file with no manifest line never launched its agent, so it left
// nothing on disk and needs no restore: when no later recorded dispatch could
// be its work (another attempt at the same role, phase and task, or, with no
// task, one whose instructions its own, perhaps cut, body does not rule out),
// it blocks no boundary (the spec's Step 2 partitions the manifest's
// dispatches: a file with no line is none of them), and it is handed to the
// skill wherever the resume starts. Here wave 2's implementers of tasks 3 and
// 4 completed with their commits and the crash cut the dispatched line of
// task 3's reviewer (seq 5): the resume restores nothing and lists seq 5 alone
// (the crash simulator's seeds 54, 163, 202, 228 and six more of 1-1000 went
// back to pre-wave-2 and redid every implementer of the wave).
func TestNotStartedFileAloneBlocksNoBoundary(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	d := func(seq, task int, role string, m int, recorded bool) *pipeline.Dispatch {
		x := &pipeline.Dispatch{Seq: seq, Template: role, Role: role, Phase: "3", Task: intp(task), Time: at(m), Class: templates.RoleMutating}
		if role == "build-reviewer" {
			x.Class = templates.RoleNonArtifact
		}
		if recorded {
			x.Recorded, x.Status, x.DurationS = true, manifest.StatusCompleted, &two
		}
		return x
	}
	mk := func() []*pipeline.Dispatch {
		return []*pipeline.Dispatch{
			d(1, 1, "build-implementer", 1, true),
			d(2, 2, "build-implementer", 1, true),
			d(3, 3, "build-implementer", 11, true),
			d(4, 4, "build-implementer", 11, true),
			d(5, 3, "build-reviewer", 14, false),
		}
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	log := fakeLog{
		{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"},
		{Hash: strings.Repeat("b", 40), Time: at(2), Message: "feat: task 2"},
		{Hash: strings.Repeat("c", 40), Time: at(12), Message: "feat: task 3"},
		{Hash: strings.Repeat("d", 40), Time: at(12), Message: "feat: task 4"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.True(t, a.Resume.End, "resumes at %s; checks %v", a.Resume.Label(), a.Checks)
	require.Nil(t, a.Checkpoint, "nothing to restore")
	require.Equal(t, "[5]", fmt.Sprint(seqs(WorkItems(a))))
	require.True(t, a.Items[0].NotStarted(), "handed to the skill")
	require.Equal(t, "[5]", fmt.Sprint(seqs(a.Crash.Unrecorded)))

	// The other sides: a later recorded attempt at task 3's review that did
	// not complete could be the file's work (it blocks, and the two are one
	// item); a never-started implementer with mutating work after it in a
	// later wave must run before that work (it blocks).
	ds := mk()
	ds = append(ds, &pipeline.Dispatch{Seq: 6, Template: "build-reviewer", Role: "build-reviewer", Phase: "3", Task: intp(3), Time: at(40),
		Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact})
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 2, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	ds = mk()
	ds[1].Recorded, ds[1].Status, ds[1].DurationS = false, "", nil
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	require.Contains(t, fmt.Sprint(seqs(WorkItems(a))), "2")
}

// A task-less dispatch file with no manifest line blocks the boundaries
// after it when a later recorded dispatch of its role and phase could be its
// work: its body may be cut by the crash, so only a context that is not the
// start of the later one's rules that out. Here scanner seq 2's file has no
// line and scanner seq 3 completed: with seq 2 asking for another repository
// (whole or cut after the difference) it blocks nothing; cut before the
// difference, or before its context heading (the crash simulator's seed 718),
// it could be seq 3's work, and the resume goes back before it.
func TestNotStartedTasklessFileBlocksOnlyWhatItCouldBe(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	mk := func() []*pipeline.Dispatch {
		return []*pipeline.Dispatch{
			{Seq: 1, Template: "build-implementer", Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), Recorded: true, Status: manifest.StatusCompleted, DurationS: &two, Class: templates.RoleMutating},
			{Seq: 2, Template: "scanner", Role: "scanner", Phase: "3", Time: at(11), Class: templates.RoleNonArtifact},
			{Seq: 3, Template: "scanner", Role: "scanner", Phase: "3", Time: at(11), Recorded: true, Status: manifest.StatusCompleted, DurationS: &two, Class: templates.RoleNonArtifact},
		}
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"}}
	for body2, blocks := range map[string]bool{
		"Scan repository alpha for leaked keys.": false,
		"Scan repository al":                     false,
		"Scan repos":                             true,
		"":                                       true,
		// cut before its context heading: the role's preamble alone
		"You are the scanner. Write your findings to 2-scanner-out": true,
	} {
		bodies := map[int]string{2: body2, 3: "Scan repository beta for leaked keys."}
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(), Checkpoints: cps, Log: log, Now: at(90),
			Describe:   func(d *pipeline.Dispatch) string { return bodies[d.Seq] },
			HasContext: func(d *pipeline.Dispatch) bool { return !strings.HasPrefix(bodies[d.Seq], "You are") }})
		require.NoError(t, err)
		if blocks {
			require.Equal(t, 2, a.Resume.Wave, "%q: resumes at %s", body2, a.Resume.Label())
			continue
		}
		require.True(t, a.Resume.End, "%q: resumes at %s; checks %v", body2, a.Resume.Label(), a.Checks)
		require.Equal(t, "[2]", fmt.Sprint(seqs(WorkItems(a))), body2)
	}
}

// Attempts at one piece of work after a dispatch file with no manifest line
// are one work item with it: its agent never ran, so a later dispatch of the
// same role, phase and task (or, with no task, the same instructions) is that
// intent carried out again, not a sibling. The item is re-dispatched from its
// first recorded attempt (the file with no line may be cut), and when no
// attempt has a line it is one row for the skill, however many files. Here
// task 2's implementer file (seq 3) has no line, its later attempt (seq 4) is
// in flight and task 3's file was written twice (seqs 5, 6), never started:
// three items, not five (the crash simulator's seeds 53, 189, 314, 326, 385,
// 424, 492 and more of 1-1000 counted each file as an item of its own).
func TestNotStartedFileJoinsTheItemOfItsLaterAttempts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	impl := func(seq, task, m int, st manifest.Status) *pipeline.Dispatch {
		d := &pipeline.Dispatch{Seq: seq, Template: "build-implementer", Role: "build-implementer", Phase: "3", Task: intp(task), Time: at(m), Class: templates.RoleMutating}
		if st != "" {
			d.Recorded, d.Status = true, st
		}
		if st == manifest.StatusCompleted {
			d.DurationS = &two
		}
		return d
	}
	ds := []*pipeline.Dispatch{
		impl(1, 1, 1, manifest.StatusCompleted),
		impl(2, 1, 1, manifest.StatusDispatched),
		impl(3, 2, 2, ""),
		impl(4, 2, 20, manifest.StatusDispatched),
		impl(5, 3, 21, ""),
		impl(6, 3, 30, ""),
	}
	ds[1].Task = intp(4)
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)}}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(2), Message: "feat: task 1"}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, "[1 2 4 5]", fmt.Sprint(seqs(WorkItems(a))), "items by their first attempt, a recorded one where there is one")
	var rows []string
	for _, it := range a.Items {
		rows = append(rows, fmt.Sprintf("%v:%v", seqs(it.Attempts), it.NotStarted()))
	}
	require.Equal(t, "[[1]:false [2]:false [3 4]:false [5 6]:true]", fmt.Sprint(rows))
}

// A replay that never completed, of work that writes no project file (an
// output or a conversation-only role) whose earlier attempt completed and
// verifies, does not make that work undone: the restore that preceded the
// replay undid no output file (they live beside the dispatch files, not in
// the project), so the earlier attempt's output still proves the work, and
// the replay's interruption left nothing in the project. Here a first resume
// restored before task 1's review, replayed the implementer (seq 4,
// completed) and was killed while replaying the reviewer (seq 5, in flight):
// a second resume has nothing to redo (the crash simulator's seed 4571 went
// back to pre-wave-1 and redid twelve items; 848, 942, 1953 alike).
func TestInterruptedReplayOfVerifiedOutputWorkBlocksNothing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	mk := func(class templates.RoleClass) []*pipeline.Dispatch {
		return []*pipeline.Dispatch{
			{Seq: 1, Template: "build-implementer", Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(1), Recorded: true, Status: manifest.StatusCompleted, DurationS: &two, Class: templates.RoleMutating},
			{Seq: 2, Template: "build-reviewer", Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(4), Recorded: true, Status: manifest.StatusCompleted, DurationS: &two, Class: class},
			{Seq: 3, Template: "build-implementer", Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(40), Recorded: true, Status: manifest.StatusCompleted, DurationS: &two, Class: templates.RoleMutating, ReplayOf: 1, ReplaySession: "1775500000"},
			{Seq: 4, Template: "build-reviewer", Role: "build-reviewer", Phase: "3", Task: intp(1), Time: at(44), Recorded: true, Status: manifest.StatusDispatched, Class: class, ReplayOf: 2, ReplaySession: "1775500000"},
		}
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-1", Time: at(30)},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(41), Message: "feat: task 1"}}
	ev := pipeline.Evidence{Outputs: map[int][]string{2: {"2-build-reviewer-output.md"}}}
	for _, class := range []templates.RoleClass{templates.RoleOutput, templates.RoleNonArtifact} {
		a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(class), Checkpoints: cps, Log: log, Evidence: ev, Now: at(90)})
		require.NoError(t, err)
		require.True(t, a.Resume.End, "%s: resumes at %s; checks %v", class, a.Resume.Label(), a.Checks)
		require.Empty(t, WorkItems(a), class)
	}

	// The other sides: the earlier attempt's output gone (nothing proves the
	// work); a mutating role (the restore undid its commit, and the replay's
	// commit may be on the branch).
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(templates.RoleOutput), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "no output: resumes at %s", a.Resume.Label())
	require.Contains(t, fmt.Sprint(seqs(WorkItems(a))), "2")
	ds := mk(templates.RoleMutating)
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Evidence: ev, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "mutating: resumes at %s", a.Resume.Label())
}

// A checkpoint holds an item's work when an earlier attempt at it completed
// before the checkpoint was taken, even if a later replay (after a restore
// undid that attempt's commit) made the commit now on the branch. When the
// earlier attempt's dispatch file is gone it has no header time, but the
// manifest's order still says when it had ended: dispatch.py appended its
// completion line before the first line of every later dispatch, so it ended
// by the earliest header time of those. Here task 2's implementer (seq 2,
// file gone) completed before task 1's reviewer (seq 3, minute 6) was
// dispatched, and pre-wave-2 was taken at minute 10; a first resume restored
// pre-wave-1 (undoing seq 2's commit), replayed tasks 1 and 2 with their
// commits and was killed replaying wave 2's implementer. The second resume
// restores pre-wave-2 and redoes wave 2 alone (the crash simulator's seeds
// 4460, 6536, 273, 1036 and a dozen more of 1-8000 went back to pre-wave-1
// and redid the wave, "restoring it would undo that verified work").
func TestCheckpointHoldsAnUntimedAttemptThatEndedBeforeIt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	two := float64(120)
	d := func(seq, task int, role string, m, first, last int, st manifest.Status, of int) *pipeline.Dispatch {
		x := &pipeline.Dispatch{Seq: seq, Template: role, Role: role, Phase: "3", Task: intp(task), Recorded: true, Status: st,
			Class: templates.RoleMutating, Entry: &manifest.Entry{Seq: seq, FirstLine: first, Line: last}, ReplayOf: of}
		if of != 0 {
			x.ReplaySession = "1775500000"
		}
		if m >= 0 {
			x.Time = at(m)
		}
		if st != manifest.StatusDispatched {
			x.DurationS = &two
		}
		if role == "build-reviewer" {
			x.Class = templates.RoleNonArtifact
		}
		return x
	}
	mk := func(reviewerAt int) []*pipeline.Dispatch {
		return []*pipeline.Dispatch{
			d(1, 1, "build-implementer", 1, 1, 3, manifest.StatusCompleted, 0),
			d(2, 2, "build-implementer", -1, 2, 4, manifest.StatusCompleted, 0),
			d(3, 1, "build-reviewer", reviewerAt, 5, 6, manifest.StatusCompleted, 0),
			d(4, 3, "build-implementer", 11, 7, 7, manifest.StatusDispatched, 0),
			// the first resume (restored pre-wave-1 at minute 40)
			d(5, 1, "build-implementer", 41, 8, 9, manifest.StatusCompleted, 1),
			d(6, 2, "build-implementer", 43, 10, 11, manifest.StatusCompleted, 2),
			d(7, 3, "build-implementer", 46, 12, 12, manifest.StatusDispatched, 4),
		}
	}
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: at(0)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-wave-2", Time: at(10)},
	}
	// the originals' commits (minutes 2 and 4) were undone by the restore
	log := fakeLog{
		{Hash: strings.Repeat("c", 40), Time: at(42), Message: "feat: task 1"},
		{Hash: strings.Repeat("d", 40), Time: at(44), Message: "feat: task 2"},
	}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: mk(6), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Empty(t, a.Failures)
	require.Equal(t, 2, a.Resume.Wave, "resumes at %s; warnings %v", a.Resume.Label(), a.Warnings)
	require.Equal(t, "[4]", fmt.Sprint(seqs(WorkItems(a))))

	// The other side: the first dispatch after seq 2's completion line was
	// made after pre-wave-2 (minute 12): nothing says seq 2 had ended by
	// then, so pre-wave-2 may lack its work. The plan names the check on
	// seq 2, whose missing header time is why.
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: mk(12), Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	require.Len(t, a.Failures, 1)
	require.Equal(t, 2, a.Failures[0].Seq)
	require.Equal(t, "checkpoint holds the work before it", a.Failures[0].Check)
	require.Contains(t, FailureLines(a)[0], "seq 2 build-implementer: checkpoint holds the work before it failed: no dispatch timestamp")

	// A timed attempt that ended after the checkpoint is no missing
	// evidence: the checkpoint lacks that work, and no check failed.
	ds := mk(12)
	ds[1].Time = at(9)
	ds[1].DurationS = &two
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: at(90)})
	require.NoError(t, err)
	require.Equal(t, 1, a.Resume.Wave, "resumes at %s", a.Resume.Label())
	require.Empty(t, a.Failures)
}

// A kept task-less dispatch whose dispatch file is gone did work the skill
// cannot name: the hand-off lists it as done, by seq and role only, and
// beside another dispatch of its role and phase nothing says which of the
// phase's pieces of work it was, so a skill continuing from the hand-off may
// dispatch that work again. The plan names the check on it (the crash
// simulator's seeds 1503, 3636, 7231 and 3453: an audit's scanner, its file
// gone, kept; the continuation scanned its package again and the plan said
// nothing). With no other dispatch of its role and phase it is named by them.
func TestKeptTasklessDispatchWithItsFileGoneIsNamed(t *testing.T) {
	t.Parallel()
	p, ds, cps := wordsRun(t)
	one := 60.0
	mk := func(beside bool) []*pipeline.Dispatch {
		out := []*pipeline.Dispatch{ds[0],
			{Seq: 2, Role: "scanner", Phase: "scan", DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 5}}}
		if beside {
			out = append(out, &pipeline.Dispatch{Seq: 3, Role: "scanner", Phase: "scan", Time: ds[1].Time, DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 3, FirstLine: 4, Line: 6}})
		}
		return append(out, &pipeline.Dispatch{Seq: 4, Role: "fixer", Phase: "fix", Time: ds[2].Time, Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 4, FirstLine: 7, Line: 7}})
	}
	ds[0].Entry = &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}
	bodies := map[int]string{1: "Survey the repositories.", 3: "Scan repository beta for leaked keys.", 4: "Fix the findings."}
	describe := func(d *pipeline.Dispatch) string { return bodies[d.Seq] }
	a, err := Analyze(Input{Profile: p, Dispatches: mk(true), Checkpoints: cps, Describe: describe})
	require.NoError(t, err)
	require.Equal(t, "[4]", fmt.Sprint(seqs(WorkItems(a))), "resumes at %s", a.Resume.Label())
	require.Contains(t, fmt.Sprint(seqs(a.Skip)), "2")
	lines := FailureLines(a)
	require.Len(t, lines, 1)
	require.True(t, strings.HasPrefix(lines[0], "seq 2 scanner: which work it was failed: its dispatch file is gone and it has no task"), lines[0])

	a, err = Analyze(Input{Profile: p, Dispatches: mk(false), Checkpoints: cps, Describe: describe})
	require.NoError(t, err)
	require.Equal(t, "[4]", fmt.Sprint(seqs(WorkItems(a))))
	require.Empty(t, FailureLines(a))
}
