package resume

import (
	"fmt"
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
