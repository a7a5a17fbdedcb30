package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
)

// Only .dispatch-active-<sid> (Crucible's two-line format) is left in the scratch
// dir: it names the dispatch dir, and that is enough to find the pipeline.
func TestResolveFromDispatchActiveAlone(t *testing.T) {
	t.Parallel()
	r := newResolveEnv(t)
	live := filepath.Join(r.opts.Tmp, "crucible-dispatch-1775430161")
	writeFile(t, live, ManifestFile, okLine)
	writeFile(t, r.scratch, DispatchActivePrefix+"1775430161", "dispatch-dir: "+live+"/\nseq: 19\n")

	loc, err := Resolve("", r.opts)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(live, ManifestFile), loc.ManifestPath)
	assert.Equal(t, r.scratch, loc.ScratchDir)
	assert.Equal(t, "1775430161", loc.SessionID)
	assert.Nil(t, loc.Marker)
	assert.True(t, loc.Live)
	require.Len(t, loc.Notes, 1)
	assert.Contains(t, loc.Notes[0], "found through .dispatch-active-1775430161")

	// The durable copy in the scratch dir is preferred over the live one.
	durable := paths.DurableDispatchDir(r.scratch, "1775430161")
	writeFile(t, durable, ManifestFile, okLine)
	loc, err = Resolve(r.scratch, r.opts)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(durable, ManifestFile), loc.ManifestPath)
	assert.False(t, loc.Live)
}

func TestResolveDispatchActiveGuards(t *testing.T) {
	t.Parallel()
	r := newResolveEnv(t)
	outside := filepath.Join(filepath.Dir(r.opts.Home), "elsewhere", "crucible-dispatch-1775430161")
	writeFile(t, outside, ManifestFile, okLine)
	writeFile(t, r.scratch, DispatchActivePrefix+"1775430161", "dispatch_dir: "+outside+"/\n")
	_, err := Resolve(r.scratch, r.opts)
	require.Error(t, err, "a dispatch dir outside the scratch dir and the tmp roots is never read")
	assert.Contains(t, err.Error(), "is not inside the scratch directory or $TMPDIR")

	r2 := newResolveEnv(t)
	writeFile(t, r2.scratch, DispatchActivePrefix+"42", "seq: 3\n")
	_, err = Resolve(r2.scratch, r2.opts)
	assert.ErrorIs(t, err, ErrNoManifest, "named sessions without a manifest: nothing to resume")

	r3 := newResolveEnv(t)
	writeFile(t, r3.scratch, DispatchActivePrefix+"42.archived-99", "seq: 3\n")
	sids, err := ReadDispatchActive(r3.scratch)
	require.NoError(t, err)
	assert.Empty(t, sids, "an archived marker is not a pipeline left behind")
}

// Crucible hashes the project's real path; replay looks there first and under the
// path as given second, so a project reached through a symlink is found.
func TestProjectScratchDirThroughSymlink(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home, real, link := filepath.Join(root, "home"), filepath.Join(root, "project"), filepath.Join(root, "link")
	require.NoError(t, os.MkdirAll(real, 0o755))
	require.NoError(t, os.Symlink(real, link))

	assert.Equal(t, paths.ScratchDir(home, real), ProjectScratchDir(home, link), "nothing exists: the real-path form")
	require.NoError(t, os.MkdirAll(paths.ScratchDir(home, link), 0o755))
	assert.Equal(t, paths.ScratchDir(home, link), ProjectScratchDir(home, link), "only the $PWD form exists: found second")
	require.NoError(t, os.MkdirAll(paths.ScratchDir(home, real), 0o755))
	assert.Equal(t, paths.ScratchDir(home, real), ProjectScratchDir(home, link), "the real path wins")
	require.NoError(t, os.MkdirAll(paths.ShadowDir(home, real), 0o755))
	assert.Equal(t, paths.ShadowDir(home, real), ProjectShadowDir(home, link))
}
