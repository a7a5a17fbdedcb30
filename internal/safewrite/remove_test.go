package safewrite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RemoveIn removes a file below the root, a link itself (never its target),
// nothing outside the root, and a file already gone is no error.
func TestRemoveIn(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
	outside := filepath.Join(dir, "private")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "logs", "1.pid"), []byte("{}"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "logs", "2.pid")))
	require.NoError(t, os.Symlink(dir, filepath.Join(root, "up")))

	require.NoError(t, RemoveIn(root, "logs/1.pid"))
	assert.NoFileExists(t, filepath.Join(root, "logs", "1.pid"))
	require.NoError(t, RemoveIn(root, "logs/1.pid"), "already gone")

	require.NoError(t, RemoveIn(root, "logs/2.pid"))
	_, err := os.Lstat(filepath.Join(root, "logs", "2.pid"))
	assert.True(t, os.IsNotExist(err), "the link itself is removed")
	assert.FileExists(t, outside, "never what it points to")

	assert.Error(t, RemoveIn(root, "../private"))
	assert.Error(t, RemoveIn(root, "up/private"))
	assert.FileExists(t, outside)
}
