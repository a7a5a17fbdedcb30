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

// A dispatch with no completion line whose output verifies is taken as
// completed when the pipeline moved past it (a sparse manifest): something
// of a later boundary was dispatched after it. A replay is placed with the
// work it redoes, so the original run's later phases lie after its place
// though nothing was dispatched after it: crash simulator seed 5017, a resume
// killed after its first agent wrote its whole output and before the
// completion line, took that replay as completed, and the next resume
// skipped it. It is in flight: with the replayed attempt's own output gone,
// nothing proves the scan and the resume point stays before it. (With that
// output still there, the earlier attempt proves the work and the
// interrupted replay blocks nothing: TestInterruptedReplayOfVerifiedOutputWorkBlocksNothing.)
func TestReplayWithoutCompletionLineIsNotMovedPast(t *testing.T) {
	t.Parallel()
	p, _, cps := wordsRun(t)
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	run := func(replayed, earlierOutput bool) (*Analysis, *pipeline.Dispatch) {
		ds := []*pipeline.Dispatch{
			{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleOutput, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
			{Seq: 2, Role: "scanner", Phase: "scan", Time: at(6), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleOutput, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 4}},
			{Seq: 3, Role: "fixer", Phase: "fix", Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 3, FirstLine: 5, Line: 5}},
		}
		ev := pipeline.Evidence{Outputs: map[int][]string{1: {"1-surveyor-output.md"}, 2: {"2-scanner-output.md"}}}
		watched := ds[1]
		if replayed {
			// a resume re-dispatched the scan (seq 4 replays seq 2) and died
			// after its agent wrote the output, before the completion line
			watched = &pipeline.Dispatch{Seq: 4, Role: "scanner", Phase: "scan", Time: at(90), ReplayOf: 2, Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleOutput, Entry: &manifest.Entry{Seq: 4, FirstLine: 6, Line: 6}}
			ds = append(ds, watched)
			ev.Outputs[4] = []string{"4-scanner-output.md"}
			if !earlierOutput {
				delete(ev.Outputs, 2)
			}
		} else {
			// a sparse manifest: the scan's completion line is missing, the
			// fix was dispatched after it
			watched.Status, watched.Entry.Line = manifest.StatusDispatched, 3
		}
		a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Evidence: ev, Now: at(120)})
		require.NoError(t, err)
		return a, watched
	}
	a, d := run(false, true)
	assert.True(t, d.Inferred, "the fix was dispatched after the scan: the pipeline moved past it")
	assert.Equal(t, "fix", a.Resume.Phase, "resumes at %s", a.Resume.Label())

	a, d = run(true, false)
	assert.False(t, d.Inferred, "nothing was dispatched after the replay")
	assert.Equal(t, "scan", a.Resume.Phase, "resumes at %s", a.Resume.Label())
	assert.Contains(t, seqs(WorkItems(a)), 2, "the scan is redone")

	a, d = run(true, true)
	assert.False(t, d.Inferred, "nothing was dispatched after the replay")
	assert.Equal(t, "fix", a.Resume.Phase, "the completed scan's output proves it: resumes at %s", a.Resume.Label())
}
