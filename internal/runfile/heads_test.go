//go:build unix

package runfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headBytes is the buffer the tests read heads into (the manifest reads 4 KiB).
const headBytes = 4096

// Heads makes the checks of ReadHead: a link is followed to a
// regular file, anything else is refused without blocking, and no more than the
// buffer is read.
func TestHeadReaderReadsOnlyRegularFilesAndAtMostTheBuffer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 3*headBytes)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-long.md"), []byte(long), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2-short.md"), []byte("# Dispatch: a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "3-empty.md"), nil, 0o644))
	require.NoError(t, os.Symlink("2-short.md", filepath.Join(dir, "4-link.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "5-fifo.md"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "6-device.md")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "7-dir.md"), 0o755))

	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	buf := make([]byte, headBytes)
	read := func(name string) (string, error) {
		b, err := heads.Read(name, buf)
		return string(b), err
	}
	got, err := read("1-long.md")
	require.NoError(t, err)
	assert.Equal(t, long[:headBytes], got)
	got, err = read("2-short.md")
	require.NoError(t, err)
	assert.Equal(t, "# Dispatch: a\n", got)
	got, err = read("3-empty.md")
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = read("4-link.md")
	require.NoError(t, err)
	assert.Equal(t, "# Dispatch: a\n", got)
	for _, name := range []string{"5-fifo.md", "6-device.md", "7-dir.md"} {
		_, err = read(name)
		assert.ErrorIs(t, err, ErrNotRegular, name)
	}
	_, err = read("8-missing.md")
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Without a descriptor of the directory, each file is read by its path.
	byPath := &Heads{dir: dir, kind: Dispatch, fd: -1}
	b, err := byPath.Read("2-short.md", buf)
	require.NoError(t, err)
	assert.Equal(t, "# Dispatch: a\n", string(b))
	_, err = byPath.Read("5-fifo.md", buf)
	assert.ErrorIs(t, err, ErrNotRegular)
}

// ReadListed trusts the listing that found the name a regular file, and keeps
// what it proved: a symbolic link in its place is refused, a FIFO reads as
// nothing without blocking, a directory fails; at most the buffer is read.
func TestReadListedKeepsWhatTheListingProved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 3*headBytes)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-long.md"), []byte(long), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2-short.md"), []byte("# Dispatch: a\n"), 0o644))
	require.NoError(t, os.Symlink("2-short.md", filepath.Join(dir, "3-link.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "4-fifo.md"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "5-dir.md"), 0o755))

	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	buf := make([]byte, headBytes)
	got, err := heads.ReadListed("1-long.md", buf)
	require.NoError(t, err)
	assert.Equal(t, long[:headBytes], string(got))
	got, err = heads.ReadListed("2-short.md", buf)
	require.NoError(t, err)
	assert.Equal(t, "# Dispatch: a\n", string(got))
	_, err = heads.ReadListed("3-link.md", buf)
	assert.ErrorIs(t, err, ErrNotRegular)
	got, err = heads.ReadListed("4-fifo.md", buf)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = heads.ReadListed("5-dir.md", buf)
	assert.Error(t, err)
	_, err = heads.ReadListed("6-missing.md", buf)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
