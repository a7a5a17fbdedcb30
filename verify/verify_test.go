package verify

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// recorded builds the fixture pipeline and records a response for seq 18 with the
// given fingerprint; it returns the pipeline and the recording's key.
func recorded(t *testing.T, fp *agent.Fingerprint) (*pipeline.Pipeline, string) {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	data, err := os.ReadFile(pl.Files[18])
	require.NoError(t, err)
	_, body, err := manifest.ParseDispatchHeader(data)
	require.NoError(t, err)
	d := pl.Dispatches[0]
	for _, x := range pl.Dispatches {
		if x.Seq == 18 {
			d = x
		}
	}
	key := agent.Key(d.Template, body)
	req := agent.Request{Seq: 18, Template: d.Template, Role: d.Role}
	require.NoError(t, agent.OpenStore(pl.DispatchDir).Save(key, req, agent.Response{Status: manifest.StatusCompleted, Fingerprint: fp}))
	return pl, key
}

func itemOf(t *testing.T, rep *Report, seq int) Item {
	t.Helper()
	for _, it := range rep.Items {
		if it.Seq == seq {
			return it
		}
	}
	t.Fatalf("no item for seq %d", seq)
	return Item{}
}

func TestRunClassifies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fp      func(*pipeline.Pipeline) *agent.Fingerprint
		agent   string
		class   Class
		changed []string
	}{
		{"version 1 style, no fingerprint", func(*pipeline.Pipeline) *agent.Fingerprint { return nil }, "", Valid, nil},
		{"matching", func(pl *pipeline.Pipeline) *agent.Fingerprint {
			return &agent.Fingerprint{Role: "adversarial-tester", ModelTier: "opus", Agent: "builtin:sim"}
		}, "builtin:sim", Valid, nil},
		{"model tier and agent changed", func(pl *pipeline.Pipeline) *agent.Fingerprint {
			return &agent.Fingerprint{Role: "adversarial-tester", ModelTier: "haiku", Agent: "./old.sh"}
		}, "builtin:sim", Stale, []string{agent.FieldModelTier, agent.FieldAgent}},
		{"input tree gone", func(pl *pipeline.Pipeline) *agent.Fingerprint {
			return &agent.Fingerprint{Role: "adversarial-tester", ModelTier: "opus", InputTree: "0123456789012345678901234567890123456789"}
		}, "", Stale, []string{agent.FieldInputTree}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pl, _ := recorded(t, tt.fp(nil))
			rep, err := Run(pl, Options{Agent: tt.agent})
			require.NoError(t, err)
			it := itemOf(t, rep, 18)
			assert.Equal(t, tt.class, it.Class, it.Reason)
			assert.Equal(t, tt.changed, it.Changed)
			assert.Equal(t, Absent, itemOf(t, rep, 17).Class)
			err = rep.Err()
			require.Error(t, err, "the other dispatches are absent")
			assert.True(t, errors.Is(err, ErrUnfaithful))
		})
	}
}

func TestRunCorrupt(t *testing.T) {
	t.Parallel()
	pl, key := recorded(t, &agent.Fingerprint{Role: "adversarial-tester", ModelTier: "opus"})
	path := agent.OpenStore(pl.DispatchDir).Path(key)
	require.NoError(t, os.WriteFile(path, []byte(`{"format":"replay-recording","version":2}`), 0o644))
	rep, err := Run(pl, Options{})
	require.NoError(t, err)
	it := itemOf(t, rep, 18)
	assert.Equal(t, Corrupt, it.Class)
	assert.Contains(t, it.Reason, path)
}
