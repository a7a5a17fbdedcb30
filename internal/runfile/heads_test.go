//go:build unix

package runfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headBytes is the buffer the tests read heads into (the manifest reads 4 KiB).
const headBytes = 4096

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

	// Without a descriptor of the directory, each file is read by its path, with
	// ReadHead's checks.
	byPath := &Heads{dir: dir, kind: Dispatch, fd: -1}
	got, err = byPath.ReadListed("2-short.md", buf)
	require.NoError(t, err)
	assert.Equal(t, "# Dispatch: a\n", string(got))
	_, err = byPath.ReadListed("4-fifo.md", buf)
	assert.ErrorIs(t, err, ErrNotRegular)
}

// ReadListedAll gives each name what ReadListed gives it, in order, over a few
// hundred files with special files and missing names among them.
func TestReadListedAllIsReadListedForEachName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var names []string
	for i := range 3*128 + 7 {
		name := fmt.Sprintf("%d-file.md", i)
		body := strings.Repeat(fmt.Sprintf("line %d\n", i), i%700) // empty, short, and past the buffer
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		names = append(names, name)
	}
	require.NoError(t, os.Symlink("1-file.md", filepath.Join(dir, "link.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir.md"), 0o755))
	names = slices.Insert(names, 200, "link.md", "fifo.md", "dir.md", "missing.md")

	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	type result struct {
		head string
		err  error
	}
	want := make([]result, len(names))
	buf := make([]byte, headBytes)
	for i, name := range names {
		head, err := heads.ReadListed(name, buf)
		want[i] = result{string(head), err}
	}
	require.ErrorIs(t, want[200].err, ErrNotRegular)
	require.ErrorIs(t, want[203].err, os.ErrNotExist)
	got := make([]result, len(names))
	next := 0
	heads.ReadListedAll(names, headBytes, func(i int, head []byte, err error) {
		assert.Equal(t, next, i, "in order")
		next++
		got[i] = result{string(head), err}
	})
	require.Equal(t, len(names), next)
	for i := range names {
		assert.Equal(t, want[i].head, got[i].head, names[i])
		if want[i].err == nil {
			assert.NoError(t, got[i].err, names[i])
		} else {
			assert.Equal(t, errors.Is(want[i].err, ErrNotRegular), errors.Is(got[i].err, ErrNotRegular), names[i])
			assert.Equal(t, errors.Is(want[i].err, os.ErrNotExist), errors.Is(got[i].err, os.ErrNotExist), names[i])
			assert.Error(t, got[i].err, names[i])
		}
	}
	// Nothing is left open: every descriptor the reads opened of a file of dir was
	// closed (the one open is the directory's own, Heads').
	entries, err := os.ReadDir("/proc/self/fd")
	if err == nil {
		for _, e := range entries {
			target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			assert.False(t, strings.HasPrefix(target, dir+string(filepath.Separator)), "descriptor %s left open on %s", e.Name(), target)
		}
	}
}

// BenchmarkReadListedAll reads the heads of 2,000 files of one directory.
func BenchmarkReadListedAll(b *testing.B) {
	dir := b.TempDir()
	names := make([]string, 2000)
	for i := range names {
		names[i] = fmt.Sprintf("%d-build-implementer.md", i)
		require.NoError(b, os.WriteFile(filepath.Join(dir, names[i]), []byte(strings.Repeat("# Dispatch: x\n", 90)), 0o644))
	}
	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	for b.Loop() {
		n := 0
		heads.ReadListedAll(names, headBytes, func(int, []byte, error) { n++ })
		require.Equal(b, len(names), n)
	}
}
