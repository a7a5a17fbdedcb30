package redispatch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/pipeline"
)

// A dispatch file swapped for a symbolic link after the run was listed (an
// agent of the run writes in its dispatch directory while replay works) is
// never read through: its body would be sent to the re-dispatched agent and
// copied into the new dispatch file that push shares. Another project's
// dispatch file, the link's target here, stays private; a real file is read.
func TestOriginalBodyNeverReadsThroughALink(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	var d *pipeline.Dispatch
	for _, x := range pl.Dispatches {
		if pl.Files[x.Seq] != "" {
			d = x
			break
		}
	}
	require.NotNil(t, d)
	body, err := originalBody(pl, d, Options{})
	require.NoError(t, err, "a real dispatch file is read")
	require.NotEmpty(t, body)

	private := filepath.Join(t.TempDir(), "3-other-project.md")
	require.NoError(t, os.WriteFile(private, []byte("# Dispatch: build-implementer\n---\nPRIVATE PROMPT OF ANOTHER PROJECT\n"), 0o600))
	path := pl.Files[d.Seq]
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(private, path))
	body, err = originalBody(pl, d, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "link")
	assert.NotContains(t, string(body), "PRIVATE")
}
