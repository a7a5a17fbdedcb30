package redispatch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// resumeRequest is a resume of fixture p with the caller's steps done the way the
// command does them, minus the terminal.
func resumeRequest(p *fixture.Pipeline, ag agent.Agent) ResumeRequest {
	now := func() time.Time { return p.Now }
	return ResumeRequest{
		Agent: ag,
		Decide: func() (*resume.Analysis, error) {
			pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
			if err != nil {
				return nil, err
			}
			return resume.Decide(pl, "", 0, p.Now)
		},
		Preflight: func(a *resume.Analysis) error {
			return resume.RunPreflight(a, resume.PreflightOptions{Templates: p.Templates, Redispatch: ag != nil}).Err
		},
		Restore: resume.RunOptions{Yes: true, Now: now, Tmp: p.Tmp},
		Redispatch: func(a *resume.Analysis, ag agent.Agent, store *agent.Store, o Options) (*Report, error) {
			o.Runner, o.Jobs, o.Now = &agent.Runner{Agent: ag, Store: store}, 1, now
			return Run(context.Background(), a, o)
		},
	}
}

func buildFixture(t *testing.T) *fixture.Pipeline {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	t.Setenv("HOME", p.Home)
	t.Setenv("TMPDIR", p.Tmp)
	return p
}

func TestResumeRestoresAndRedispatches(t *testing.T) {
	p := buildFixture(t)
	before, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	ag, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	var warns []string
	r := resumeRequest(p, ag)
	r.Warn = func(w string) { warns = append(warns, w) }

	res, err := Resume(r)
	require.NoError(t, err)
	require.NotNil(t, res.Restore)
	require.NotNil(t, res.Restore.Restore, "the checkpoint was restored")
	assert.NotEmpty(t, res.Restore.Restore.SafetyRef, "behind a pre-restore ref")
	require.NotNil(t, res.Report)
	require.Len(t, res.Report.Outcomes, 1, "seq 19 is re-executed")
	assert.Equal(t, 19, res.Report.Outcomes[0].Original.Seq)
	assert.NoError(t, res.Stopped())

	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(after, manifest.WithoutTornTail(before)), "the original manifest lines are untouched (a torn last line moves to its sidecar)")
	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	last := m.Entries[len(m.Entries)-1]
	require.NotNil(t, last.ReplayOf)
	assert.Equal(t, 19, *last.ReplayOf)
	require.NotNil(t, last.ReplaySession)
	assert.Equal(t, res.Restore.Session, *last.ReplaySession)
}

func TestResumeWithoutAgentHandsOff(t *testing.T) {
	p := buildFixture(t)
	before, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	res, err := Resume(resumeRequest(p, nil))
	require.NoError(t, err)
	require.NotNil(t, res.Restore)
	assert.Nil(t, res.Report, "no agent: nothing re-dispatched")
	assert.NotEmpty(t, res.Restore.State.CSB.NextSteps)
	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a hand-off appends nothing")
}

func TestResumeStopsOnAFailedPreflight(t *testing.T) {
	p := buildFixture(t)
	before, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	r := resumeRequest(p, nil)
	refused := errors.New("preflight refused")
	r.Preflight = func(*resume.Analysis) error { return refused }
	_, err = Resume(r)
	assert.ErrorIs(t, err, refused)
	after, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing restored or written")
}
