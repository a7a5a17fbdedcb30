package resume

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// Simulator seeds 3566 (siege) and 7606 (debugging): every fix round's checkpoint
// was evicted, and the task-less fixer of round 2 was in flight. Waves were found
// from tasked dispatches only, so round 2 had no boundary and the resume went back
// to round 1, redoing its verified fix. A task-less phase goes in rounds: the
// fixer dispatched again after its verifier opens the next one; a retry of the
// fixer with nothing in between does not.
func TestTasklessFixRoundsArePlacedWithoutCheckpoints(t *testing.T) {
	t.Parallel()
	p, err := templates.Load("siege")
	require.NoError(t, err)
	t0 := time.Date(2026, 5, 5, 7, 39, 31, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "explorer", Phase: "1", Time: at(-20)},
		{Seq: 4, Role: "siege-fix", Phase: "4", Time: at(0)},
		{Seq: 5, Role: "siege-fix", Phase: "4", Time: at(8)}, // a retry: nothing else ran in between
		{Seq: 6, Role: "fix-verifier", Phase: "4", Time: at(20)},
		{Seq: 7, Role: "siege-fix", Phase: "4", Time: at(30)},
		{Seq: 8, Role: "fix-verifier", Phase: "4", Time: at(40)},
		{Seq: 9, Role: "siege-fix", Phase: "4", Time: at(50)},
	}
	assert.Equal(t, []time.Time{at(0), at(30), at(50)}, waveStarts("4", ds))

	bs := placeBoundaries(p, nil, ds)
	var names []string
	for _, b := range bs {
		names = append(names, b.Label())
	}
	assert.Equal(t, []string{"start of the pipeline", "Pre-Phase 4: pre-siege-fix-round-1",
		"Mid-Phase 4 (fix round 2): pre-siege-fix-round-2", "Mid-Phase 4 (fix round 3): pre-siege-fix-round-3", "end of the recorded work"}, names)
	assert.Equal(t, bs[2].Index, segmentOf(p, ds[4], bs), "round 2's fixer lies after round 2's boundary")
	assert.Equal(t, bs[1].Index, segmentOf(p, ds[3], bs), "round 1's verifier lies before it")
	assert.True(t, bs[2].Inferred)

	// A tasked phase keeps the wave rule: a fixer of a task already seen is
	// the same wave.
	one := 1
	tasked := []*pipeline.Dispatch{
		{Seq: 1, Role: "implementer", Phase: "4", Task: &one, Time: at(0)},
		{Seq: 2, Role: "fix-verifier", Phase: "4", Time: at(10)},
		{Seq: 3, Role: "implementer", Phase: "4", Task: &one, Time: at(20)},
	}
	assert.Equal(t, []time.Time{at(0)}, waveStarts("4", tasked))
}

// Crash simulator seed 4928: wave 1's third implementer's dispatch file was
// gone (no header time), so its task was never seen among the wave's
// implementers; its reviewer, the first dispatch seen of task 3, opened an
// inferred wave 2, and the reviewer of task 1 (in flight, its output whole)
// counted as a wave the pipeline had moved past, so the resume took it as
// completed and redid nothing. A dispatch with no header time still shows
// its task at its place in the manifest (placeUntimed); it opens no wave,
// its time being only a lower bound.
func TestUntimedDispatchShowsItsTaskToTheWaves(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 8, 25, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	task := func(n int) *int { return &n }
	ds := []*pipeline.Dispatch{
		{Seq: 4, Role: "build-implementer", Phase: "3", Task: task(1), Time: at(0)},
		{Seq: 5, Role: "build-implementer", Phase: "3", Task: task(2), Time: at(1)},
		{Seq: 6, Role: "build-implementer", Phase: "3", Task: task(3), Placed: at(1)}, // file gone
		{Seq: 7, Role: "build-reviewer", Phase: "3", Task: task(1), Time: at(30)},
		{Seq: 8, Role: "build-reviewer", Phase: "3", Task: task(2), Time: at(31)},
		{Seq: 9, Role: "build-reviewer", Phase: "3", Task: task(3), Time: at(32)},
		{Seq: 10, Role: "build-implementer", Phase: "3", Task: task(4), Time: at(40)},
	}
	assert.Equal(t, []time.Time{at(0), at(40)}, waveStarts("3", ds))
	// an untimed dispatch of a new task opens nothing: the next timed one does
	ds[6].Time, ds[6].Placed = time.Time{}, at(32)
	ds = append(ds, &pipeline.Dispatch{Seq: 11, Role: "build-implementer", Phase: "3", Task: task(5), Time: at(41)})
	assert.Equal(t, []time.Time{at(0), at(41)}, waveStarts("3", ds))
}
