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

// cutSiblingRun is an audit run whose task-less scanner (seq 2) was in
// flight when the crash came, its dispatch file gone, while the file of a
// second task-less dispatch (seq 3, no manifest line) was being written: the
// crash cut it inside its header, so it is no dispatch (the header parser
// refuses it), only what is left of it (cut).
func cutSiblingRun(t *testing.T, cut []byte) *Analysis {
	t.Helper()
	p, _, cps := wordsRun(t)
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one := 60.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 2}},
		{Seq: 2, Role: "scanner", Phase: "scan", Template: "scanner", Time: at(6), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact, Entry: &manifest.Entry{Seq: 2, FirstLine: 3, Line: 3}},
	}
	ev := pipeline.Evidence{Outputs: map[int][]string{}, Receipts: map[int][]string{}}
	if h, ok := manifest.ParseCutDispatchHeader(cut); ok {
		ev.Cut = map[int]*manifest.CutDispatchHeader{3: h}
	}
	a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Evidence: ev, Describe: func(*pipeline.Dispatch) string { return "" }})
	require.NoError(t, err)
	return a
}

// A dispatch file cut inside its header still names its role, and maybe its
// phase and task, on what the crash left of it: a second dispatch of the
// role was being written beside the task-less one in flight, and unless what
// is left of it says it was other work (another phase, a task), a prompt
// rebuilt from the template alone cannot tell which scan the gone one was
// (crash simulator seed 12204: cut after the phase and task line; seed 18127:
// cut inside the task's key; each time the rebuilt prompt was dispatched and
// the agent could not tell). A field the crash cut is only the start of what
// was written: it rules out what it cannot begin.
func TestCutHeaderSiblingMakesTheRebuildAmbiguous(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cut string
		ambiguous bool
	}{
		{"cut after the phase and task line", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** null\n**Timestamp:**", true},
		{"cut inside the task's key (seed 18127)", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Tas", true},
		{"cut inside the task's none", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** nu", true},
		{"cut inside the phase's value", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** sc", true},
		{"cut before the phase", "# Dispatch: scanner\n**Pipeline:** aud", true},
		{"cut right after the template line", "# Dispatch: scanner\n", true},
		{"cut inside another phase's value", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** rep", false},
		{"cut inside a task's number", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** 4", false},
		{"cut inside the template line", "# Dispatch: scan", false},
		{"another phase", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** report | **Task:** -\n", false},
		{"a task", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** 4\n", false},
		{"another role", "# Dispatch: fixer\n**Pipeline:** audit | **Phase:** scan | **Task:** -\n", false},
		{"another role cut before the phase", "# Dispatch: fixer\n**Pipeline:** aud", false},
	} {
		a := cutSiblingRun(t, []byte(tc.cut))
		why := a.ambiguousRebuild(a.find(2))
		if tc.ambiguous {
			assert.Contains(t, why, "seq 3", tc.name)
		} else {
			assert.Equal(t, "", why, tc.name)
		}
		assert.Nil(t, a.find(3), "%s: a cut header is never a dispatch", tc.name)
	}
}
