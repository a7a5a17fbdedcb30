package fork

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

func mustBody(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, body, err := manifest.ParseDispatchHeader(data)
	require.NoError(t, err)
	return body
}

func TestSubstitutionIsRecordedWithAFingerprint(t *testing.T) {
	p, pl := build(t)
	require.NoError(t, os.WriteFile(filepath.Join(p.Root, "v.txt"), []byte("FAIL\n"), 0o644))
	res, err := Create(Request{Root: pl, At: 15, Substitutions: []string{"15=v.txt"}, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now})
	require.NoError(t, err)
	require.Len(t, res.Record.Substitutions, 1)
	key := res.Record.Substitutions[0].Key
	rec, ok, err := agent.OpenStore(res.Dir).Lookup(key)
	require.NoError(t, err)
	require.True(t, ok)
	require.NotNil(t, rec.Fingerprint, "a substituted answer is recorded with what it depends on")
	var d *pipeline.Dispatch
	for _, x := range pl.Dispatches {
		if x.Seq == 15 {
			d = x
		}
	}
	require.NotNil(t, d)
	fp := rec.Fingerprint
	assert.Equal(t, d.Template, fp.Template)
	assert.Equal(t, d.Role, fp.Role)
	assert.Len(t, fp.BodySHA256, 64)
	assert.Empty(t, fp.Agent, "it stands for any agent")
	assert.Empty(t, fp.InputTree, "and any input tree")

	// It matches the dispatch it answers, whatever agent and tree a replay has...
	req := agent.Request{Seq: 40, Role: d.Role, Template: d.Template, Body: mustBody(t, pl.Files[15])}
	if d.Entry != nil && d.Entry.ModelTier != nil {
		req.ModelTier = *d.Entry.ModelTier
	}
	assert.Empty(t, agent.StaleAt(req, rec, "builtin:sim", agent.ReuseExact, false, "", "0123456789abcdef0123456789abcdef01234567"))
	// ...and is stale once the role it answered for changes.
	req.Role = "another-role"
	assert.Equal(t, []string{agent.FieldRole}, agent.StaleAt(req, rec, "builtin:sim", agent.ReuseExact, false, "", ""))
}
