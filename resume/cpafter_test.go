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

// A checkpoint is the tree at its time: the work of a dispatch before its
// boundary whose commit came later is not in it, and restoring it while
// skipping that dispatch loses the work (crash simulator seeds 9475, 10889:
// an implementer whose file was gone was placed a wave early, before the
// pre-wave-2 it ran after; its replay's commit was verified and skipped, and
// the restore of pre-wave-2 undid it: tree/unit-missing). Such a checkpoint
// is not that boundary's state: the resume falls back to an earlier one.
func TestCheckpointOlderThanWorkBeforeItIsNotRestored(t *testing.T) {
	t.Parallel()
	p, _, cps := wordsRun(t)
	t0 := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	one, ten := 60.0, 600.0
	run := func(commitAt int) *Analysis {
		ds := []*pipeline.Dispatch{
			{Seq: 1, Role: "surveyor", Phase: "survey", Time: at(1), DurationS: &one, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact},
			{Seq: 2, Role: "scanner", Phase: "scan", Time: at(6), DurationS: &ten, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
			{Seq: 3, Role: "fixer", Phase: "fix", Time: at(11), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleNonArtifact},
		}
		log := fakeLog{{Hash: strings.Repeat("d", 40), Time: at(commitAt), Message: "docs(scanner): the scan report"}}
		a, err := Analyze(Input{Profile: p, Dispatches: ds, Checkpoints: cps, Log: log, Now: at(60)})
		require.NoError(t, err)
		return a
	}
	a := run(8) // committed before pre-fix (at 10): pre-fix holds it
	require.NotNil(t, a.Checkpoint)
	assert.Equal(t, "pre-fix", a.Checkpoint.Reason)

	a = run(12) // committed after pre-fix was taken
	require.NotNil(t, a.Checkpoint)
	assert.Equal(t, "pre-scan", a.Checkpoint.Reason, "pre-fix does not hold seq 2's commit")
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "before the commit")
}
