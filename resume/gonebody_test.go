package resume

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// goneBodyRun is a /build-like run of words whose task-less plan writer
// failed (seq 2) and was dispatched again after the failure (seq 3, which
// completed), then a third attempt-free phase crashed in flight (seq 4). The
// dispatch file of seq gone is gone: its instructions cannot be read.
func goneBodyRun(t *testing.T, gone int, third string) *Analysis {
	t.Helper()
	p, _, cps := wordsRun(t)
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
		{Seq: 2, Role: "scanner", Phase: "scan", Time: at(6), DurationS: &one, Recorded: true, Status: manifest.StatusFailed, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 4}},
		{Seq: 3, Role: "scanner", Phase: "scan", Time: at(8), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 3, FirstLine: 5, Line: 6}},
		{Seq: 4, Role: "fixer", Phase: "fix", Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 4, FirstLine: 7, Line: 7}},
	}
	bodies := map[int]string{1: "Survey the repository.", 2: "Scan repository github.com/acme/billing for leaked secrets.", 3: "Scan repository github.com/acme/billing for leaked secrets.", 4: "Fix the findings."}
	delete(bodies, gone)
	if third != "" {
		// another task-less scan of the phase, dispatched after both
		ds = append(ds, &pipeline.Dispatch{Seq: 5, Role: "scanner", Phase: "scan", Time: at(9), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 5, FirstLine: 8, Line: 9}})
		bodies[5] = third
	}
	a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Describe: func(d *pipeline.Dispatch) string { return bodies[d.Seq] }})
	require.NoError(t, err)
	return a
}

// goneBodyRunReplayed is goneBodyRun with seq 3's file gone and seq 3 in
// flight, its item re-dispatched by a resume as seq 6 (replay_of 2), which
// completed.
func goneBodyRunReplayed(t *testing.T) *Analysis {
	t.Helper()
	p, _, cps := wordsRun(t)
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
		{Seq: 2, Role: "scanner", Phase: "scan", Time: at(6), DurationS: &one, Recorded: true, Status: manifest.StatusFailed, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 4}},
		{Seq: 3, Role: "scanner", Phase: "scan", Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 3, FirstLine: 5, Line: 5}},
		{Seq: 6, Role: "scanner", Phase: "scan", Time: at(90), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, ReplayOf: 2, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 6, FirstLine: 6, Line: 7}},
		{Seq: 7, Role: "fixer", Phase: "fix", Time: at(95), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 7, FirstLine: 8, Line: 8}},
	}
	bodies := map[int]string{1: "Survey the repository.", 2: "Scan repository github.com/acme/billing for leaked secrets.", 6: "Scan repository github.com/acme/billing for leaked secrets.", 7: "Fix the findings."}
	a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Describe: func(d *pipeline.Dispatch) string { return bodies[d.Seq] }})
	require.NoError(t, err)
	return a
}

// A failed task-less dispatch and a later dispatch of its role and phase that
// started after it failed, one of whose dispatch files is gone: nothing can
// compare their instructions, and the resume rebuilds the gone one from its
// role's template when nothing says the role has several units of work in
// that phase (ambiguousRebuild). That template-only prompt asks for the
// role's one work in the phase, so the two are one work item: the later one
// is the failed one's retry. Kept apart, the resume redid the work twice when
// it restored before both (crash simulator seeds 4827, 4853, 5732, 5733: the
// plan writer's commit made twice), and when the failed one's file was the
// gone one it never counted as superseded, so the resume went back to the
// start of the pipeline (5010, 6482). A resume's replay of the item
// did not run beside a retry the crash left in flight (5733). With a third scan given other
// instructions the role has several units there: nothing is merged.
func TestTasklessRetryWithItsInstructionsGoneIsTheSameWork(t *testing.T) {
	t.Parallel()
	for _, gone := range []int{2, 3} {
		a := goneBodyRun(t, gone, "")
		assert.True(t, a.complete(a.find(2)), "file of seq %d gone: seq 2 is superseded by its retry", gone)
		assert.Equal(t, "fix", a.Resume.Phase, "file of seq %d gone: resumes at %s", gone, a.Resume.Label())
		assert.Equal(t, a.itemOf(a.find(2)), a.itemOf(a.find(3)), "file of seq %d gone: one item", gone)
	}
	a := goneBodyRun(t, 3, "Scan repository github.com/acme/ledger for leaked secrets.")
	assert.False(t, a.complete(a.find(2)), "a third scan with other instructions: the role has several units of work in the phase")
	require.NotEqual(t, a.itemOf(a.find(2)), a.itemOf(a.find(3)))

	// a resume re-dispatched the item (seq 6 replays seq 2) while the gone
	// retry was in flight: the replay did not run beside it, it is its item
	a = goneBodyRunReplayed(t)
	assert.Equal(t, a.itemOf(a.find(2)), a.itemOf(a.find(3)), "the in-flight retry joins the failed attempt's item")
	assert.Equal(t, "", a.ambiguousRebuild(a.find(3)), "the replay of its item did not run beside it")

	// both readable and the same: one item, as before
	a = goneBodyRun(t, 0, "")
	require.True(t, a.complete(a.find(2)), "the same instructions")
	require.Equal(t, a.itemOf(a.find(2)), a.itemOf(a.find(3)))
}
