package resume

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// A task-less surveyor failed (seq 1) and the orchestrator was writing its
// retry's dispatch file (seq 2) when the run crashed: the file was cut before
// its instructions and has no manifest line. The first resume took seq 2 for
// a retry of seq 1 (one work item) and replayed seq 1 as seq 3, which
// completed; the skill went on, took its checkpoints and crashed again in the
// fix phase. Seq 2's attempt never started, and a later attempt at its item
// completed: it blocks no boundary, as a recorded attempt superseded the same
// way blocks none. It kept the survey phase incomplete for ever, so the second
// resume went back to the start of the pipeline (crash simulator seed 31091:
// it kept the verified work on disk and redid less than the minimum from the
// latest boundary whose work is all done).
func TestUnrecordedRetryWhoseItemALaterAttemptCompletedBlocksNothing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	p := templates.Generic(templates.GenericInput{Skill: "audit", Phases: []string{"survey", "scan", "fix"},
		Marks: []templates.GenericMark{{Reason: "pre-scan", Phase: "scan", Opens: true}, {Reason: "pre-fix", Phase: "fix", Opens: true}}, Roles: []string{"surveyor", "scanner", "fixer"}})
	cps := []pipeline.CheckpointRef{
		{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-scan", Time: at(40)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-fix", Time: at(50)},
	}
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusFailed, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
		{Seq: 2, Role: "surveyor", Phase: "survey", Time: at(3), Class: templates.RoleNonArtifact},
		{Seq: 3, Role: "surveyor", Phase: "survey", Time: at(30), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, ReplayOf: 1, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 3, FirstLine: 3, Line: 4}},
		{Seq: 4, Role: "scanner", Phase: "scan", Time: at(41), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 4, FirstLine: 5, Line: 6}},
		{Seq: 5, Role: "fixer", Phase: "fix", Time: at(51), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 5, FirstLine: 7, Line: 7}},
	}
	bodies := map[int]string{1: "Survey services/ for entry points.", 3: "Survey services/ for entry points.", 4: "Scan services/billing for leaked secrets.", 5: "Fix the findings."}
	a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps,
		Describe:   func(d *pipeline.Dispatch) string { return bodies[d.Seq] },
		HasContext: func(d *pipeline.Dispatch) bool { return bodies[d.Seq] != "" }})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint, "resumes at a checkpoint, not the start: %s", a.Resume.Label())
	assert.Equal(t, "pre-fix", a.Checkpoint.Reason)
	var redo []int
	for _, d := range a.Redo {
		redo = append(redo, d.Seq)
	}
	assert.Equal(t, []int{5}, redo, "only the fix in flight is redone")
}
