package redispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/templates"
)

// decideWith loads fixture p with the build profile changed by change and decides
// its resume (seq 19, a build-implementer, is re-executed).
func decideWith(t *testing.T, p *fixture.Pipeline, change func(*templates.Profile)) *resume.Analysis {
	t.Helper()
	prof, err := templates.Load("build")
	require.NoError(t, err)
	change(prof)
	data, err := json.Marshal(prof)
	require.NoError(t, err)
	file := filepath.Join(p.Root, "profile.json")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project, ProfileFile: file})
	require.NoError(t, err)
	a, err := resume.DecideFor(pl, "", 0, p.Now, nil)
	require.NoError(t, err)
	return a
}

func moveRole(role string, to *[]string, from ...*[]string) func(*templates.Profile) {
	return func(*templates.Profile) {
		for _, f := range from {
			*f = slices.DeleteFunc(*f, func(r string) bool { return r == role })
		}
		*to = append(*to, role)
	}
}

func TestReplayRefusesAnExternalRoleBeforeAnyDispatch(t *testing.T) {
	p := buildFixture(t)
	var prof *templates.Profile
	a := decideWith(t, p, func(x *templates.Profile) {
		prof = x
		moveRole("build-implementer", &x.SideEffects.External, &x.SideEffects.Commits)(x)
	})
	require.True(t, prof.IsExternal("build-implementer"))
	sim, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	before, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	var calls int64
	runner := agent.NewRunner(countingAgent{sim, &calls}, agent.OpenStore(t.TempDir()))
	replay := Options{Runner: runner, Jobs: 1, Session: "ab-1", WorkDir: p.Project, Now: func() time.Time { return p.Now },
		Extra: map[string]json.RawMessage{pipeline.ReplayModeKey: json.RawMessage(pipeline.ReplayModeAB)}}

	score, err := Forecast(a, replay, ForecastStart{})
	require.NoError(t, err)
	require.Len(t, score.Items, 1)
	assert.True(t, score.Items[0].Refused)
	assert.Contains(t, score.Items[0].Reason, "absent")

	_, err = Run(context.Background(), a, replay)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrExternal))
	assert.Contains(t, err.Error(), "seq 19 (build-implementer)")
	assert.Contains(t, err.Error(), "--allow-external")
	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was dispatched")
	assert.Zero(t, calls)

	// Allowed, the replay runs it.
	replay.AllowExternal = true
	rep, err := Run(context.Background(), a, replay)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Live)
	assert.EqualValues(t, 1, calls)
}

func TestResumeOfTheOwnRunRunsAnExternalRole(t *testing.T) {
	p := buildFixture(t)
	a := decideWith(t, p, func(x *templates.Profile) {
		moveRole("build-implementer", &x.SideEffects.External, &x.SideEffects.Commits)(x)
	})
	sim, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	rep, err := Run(context.Background(), a, Options{Runner: agent.NewRunner(sim, nil), Jobs: 1, Session: "s", WorkDir: p.Project, Now: func() time.Time { return p.Now }})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Live)
}

func TestPureRoleThatCommitsIsNamedAndTemplateHashRecorded(t *testing.T) {
	p := buildFixture(t)
	a := decideWith(t, p, func(x *templates.Profile) {
		moveRole("build-implementer", &x.SideEffects.Pure, &x.SideEffects.Commits)(x)
	})
	sim, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	text := []byte("the implementer template\n")
	var log bytes.Buffer
	o := Options{Runner: agent.NewRunner(sim, agent.OpenStore(t.TempDir())), Jobs: 1, Session: "s", WorkDir: p.Project,
		Now: func() time.Time { return p.Now }, Log: &log,
		Template: func(string) ([]byte, error) { return text, nil }}
	rep, err := Run(context.Background(), a, o)
	require.NoError(t, err)
	require.Len(t, rep.Outcomes, 1)
	require.Len(t, rep.Warnings, 1)
	assert.Contains(t, rep.Warnings[0], "role build-implementer is pure (no commits), but its live run created commits")
	assert.Contains(t, log.String(), "warning: seq ")
	fp := rep.Outcomes[0].Response.Fingerprint
	require.NotNil(t, fp)
	sum := sha256.Sum256(text)
	assert.Equal(t, hex.EncodeToString(sum[:]), fp.TemplateSHA256, "a re-dispatched call's fingerprint carries its template's hash")
}

// countingAgent counts the calls of the agent it wraps.
type countingAgent struct {
	agent.Agent
	n *int64
}

func (c countingAgent) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	*c.n++
	return c.Agent.Run(ctx, req)
}
