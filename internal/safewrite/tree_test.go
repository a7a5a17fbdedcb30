//go:build unix

package safewrite

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WriteFile writes a regular file (its parents made), and refuses a link, a
// FIFO (without blocking) or a directory in the file's place, leaving what the
// link leads to untouched.
func TestWriteFileRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))

	ok := filepath.Join(dir, "tree", "a", "b.txt")
	require.NoError(t, WriteFile(ok, []byte("one"), 0o644))
	require.NoError(t, WriteFile(ok, []byte("two"), 0o644), "an existing regular file is truncated")
	data, err := os.ReadFile(ok)
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	ro := filepath.Join(dir, "tree", "ro.pack")
	require.NoError(t, WriteFile(ro, []byte("x"), 0o444))
	st, err := os.Stat(ro)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o444), st.Mode().Perm())

	link := filepath.Join(dir, "tree", "link")
	require.NoError(t, os.Symlink(victim, link))
	assert.ErrorIs(t, WriteFile(link, []byte("stolen"), 0o644), ErrLink)
	fifo := filepath.Join(dir, "tree", "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	assert.ErrorIs(t, WriteFile(fifo, []byte("x"), 0o644), ErrNotRegular)
	assert.Error(t, WriteFile(filepath.Join(dir, "tree", "a"), []byte("x"), 0o644), "a directory")
	data, err = os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
}

// MkdirAll makes a path as mkdir -p does and fails on a file in the way.
func TestMkdirAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, MkdirAll(filepath.Join(dir, "a", "b", "c")))
	assert.DirExists(t, filepath.Join(dir, "a", "b", "c"))
	require.NoError(t, MkdirAll(filepath.Join(dir, "a", "b")), "an existing directory is fine")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	assert.Error(t, MkdirAll(filepath.Join(dir, "f", "g")))
}

// RemoveAllIn removes a tree below the root, links inside it as links (never
// what they lead to), a linked rel itself, nothing outside the root; a name
// already gone is no error.
func TestRemoveAllIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "tree", "sub"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "tree", "sub", "f"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "tree", "out")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linked")))

	require.NoError(t, RemoveAllIn(root, "tree"))
	assert.NoDirExists(t, filepath.Join(root, "tree"))
	require.NoError(t, RemoveAllIn(root, "linked"))
	_, err := os.Lstat(filepath.Join(root, "linked"))
	assert.True(t, os.IsNotExist(err), "the link itself is removed")
	require.NoError(t, RemoveAllIn(root, "tree"), "already gone")

	require.NoError(t, os.Symlink(outside, filepath.Join(root, "up")))
	assert.ErrorIs(t, RemoveAllIn(root, "../outside"), ErrLink)
	assert.Error(t, RemoveAllIn(root, "up/keep"))
	assert.FileExists(t, filepath.Join(outside, "keep"))

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp-1", "x"), 0o755))
	require.NoError(t, RemoveAllPath(filepath.Join(dir, "tmp-1")))
	assert.NoDirExists(t, filepath.Join(dir, "tmp-1"))
}

// RenameIn renames inside the root, a link as the link, and refuses names
// that leave the root.
func TestRenameIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	require.NoError(t, os.MkdirAll(root, 0o755))
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(root, "l")))

	require.NoError(t, RenameIn(root, "a", "b"))
	assert.FileExists(t, filepath.Join(root, "b"))
	require.NoError(t, RenameIn(root, "l", "l2"))
	target, err := os.Readlink(filepath.Join(root, "l2"))
	require.NoError(t, err)
	assert.Equal(t, victim, target, "the link is renamed, not followed")
	assert.FileExists(t, victim)

	assert.ErrorIs(t, RenameIn(root, "b", "../stolen"), ErrLink)
	assert.ErrorIs(t, RenameIn(root, "../victim", "v"), ErrLink)
	assert.NoFileExists(t, filepath.Join(dir, "stolen"))
	assert.FileExists(t, victim)
}

// RemovePath removes a link itself, never its target.
func TestRemovePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "l")))
	require.NoError(t, RemovePath(filepath.Join(dir, "l")))
	assert.FileExists(t, victim)
	require.NoError(t, RemovePath(filepath.Join(dir, "l")), "already gone")
}

// WriteFileIn writes below the root and refuses a linked directory on the way.
func TestWriteFileInStaysInTheRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, WriteFileIn(root, filepath.Join("a", "b.txt"), []byte("ok"), 0o644))
	assert.FileExists(t, filepath.Join(root, "a", "b.txt"))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linked")))
	assert.ErrorIs(t, WriteFileIn(root, filepath.Join("linked", "x"), []byte("x"), 0o644), ErrLink)
	assert.Error(t, WriteFileIn(root, filepath.Join("..", "outside", "x"), []byte("x"), 0o644))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
