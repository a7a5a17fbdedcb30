package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShadowProof: a command checks its shadow once (ProveShadowDir) and hands
// the proof on; the readers and writers that take it refuse the zero value, and
// the proof of a refused directory is never given.
func TestShadowProof(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))

	var zero ShadowDir
	assert.False(t, zero.Checked())
	_, err := OpenShadow(zero, project)
	assert.ErrorContains(t, err, "not checked")
	_, err = OpenOrInit(zero, project)
	assert.ErrorContains(t, err, "not checked")
	_, err = LockShadow(zero)
	assert.ErrorContains(t, err, "not checked")

	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(project, link))
	d, err := ProveShadowDir(link)
	assert.ErrorIs(t, err, ErrRefused, "a link in the shadow's place")
	assert.False(t, d.Checked())

	d, err = ProveShadowDir(filepath.Join(root, "shadow"))
	require.NoError(t, err)
	require.True(t, d.Checked())
	lock, err := LockShadow(d)
	require.NoError(t, err)
	defer lock.Release()
	s, err := OpenOrInit(d, project)
	require.NoError(t, err)
	assert.Equal(t, d, s.Shadow(), "the store keeps the proof its opening passed")
	s2, err := OpenShadow(s.Shadow(), project)
	require.NoError(t, err)
	assert.Equal(t, s.ShadowDir(), s2.ShadowDir())
}
