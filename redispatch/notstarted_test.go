package redispatch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// A dispatch file with no manifest line (21-build-reviewer.md) never started
// its agent: dispatch.py appends the dispatched line before the orchestrator
// starts it, and nothing proves the file whole (a crash during its write cuts
// it; the crash simulator's resume/agent-sent-torn-dispatch-file sent such
// cut files to the agent verbatim). The plan lists its item for the skill
// ("skill"), the re-dispatch sends seq 19 and not seq 21, and says so; the
// in-flight dispatch beside it (seq 19, recorded) is the other side.
func TestRunLeavesANotStartedDispatchToTheSkill(t *testing.T) {
	p := e2ekit.Hermetic(t, fixture.UnrecordedDispatch21)
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	a, err := resume.DecideFor(pl, "", 0, p.Now, nil)
	require.NoError(t, err)
	plan := resume.BuildPlan(a, nil)
	runs := map[int]string{}
	for _, r := range plan.Redo {
		runs[r.Seq] = r.Run
	}
	require.Equal(t, map[int]string{19: "live", 21: "skill"}, runs)

	sim, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	var calls int64
	var log bytes.Buffer
	o := Options{Runner: agent.NewRunner(countingAgent{sim, &calls}, agent.OpenStore(t.TempDir())), Jobs: 1, Session: "1775500000",
		WorkDir: p.Project, Now: func() time.Time { return p.Now }, Log: &log}
	rep, err := Run(context.Background(), a, o)
	require.NoError(t, err)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, 19, rep.Outcomes[0].Original.Seq)
	assert.EqualValues(t, 1, calls)
	require.Len(t, rep.NotStarted, 1)
	assert.Equal(t, 21, rep.NotStarted[0].Seq)
	assert.Contains(t, log.String(), "seq 21 (build-reviewer t3): its dispatch file has no manifest line")
	data, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"replay_of":21`)
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(p.ManifestPath), "*-build-reviewer.md"))
	for _, m := range matches {
		assert.NotContains(t, filepath.Base(m), "22-build-reviewer", "a re-dispatch of seq 21 was written")
	}
}

// A completion a recording served names the dispatch that recorded it
// (recorded_by): its commits are that dispatch's, made in its window
// (resume.RecordedByKey); a live completion names none.
func TestFinalExtraNamesTheRecorder(t *testing.T) {
	served := finalExtra(nil, agent.Response{Reused: true, RecordedBy: "15-build-implementer"})
	assert.Equal(t, `true`, string(served["reused"]))
	assert.Equal(t, `"15-build-implementer"`, string(served[resume.RecordedByKey]))
	live := finalExtra(nil, agent.Response{})
	assert.NotContains(t, live, resume.RecordedByKey)
}
