package safewrite

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritesStayInsideTheirRoot(t *testing.T) {
	t.Parallel()
	type plant func(t *testing.T, root, outside string)
	for _, c := range []struct {
		name  string
		rel   string
		plant plant
	}{
		{"symlinked directory", "logs/a.log", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "logs")))
		}},
		{"symlinked file", "a.md", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(root, "a.md")))
		}},
		{"escaping name", "../victim", func(t *testing.T, root, outside string) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root := filepath.Join(base, "root")
			outside := filepath.Join(base, "outside")
			require.NoError(t, os.Mkdir(root, 0o755))
			require.NoError(t, os.Mkdir(outside, 0o755))
			victim := filepath.Join(outside, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
			c.plant(t, root, outside)

			err := WriteAtomicIn(root, c.rel, []byte("new"))
			require.Error(t, err)
			f, err := OpenInRoot(root, c.rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			require.Error(t, err)
			assert.Nil(t, f)
			if c.name != "escaping name" {
				assert.ErrorIs(t, err, ErrLink)
			}
			data, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "keep", string(data))
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing new outside the root")
		})
	}
}

func TestWriteAtomicInCreatesDirectoriesAndReplaces(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, WriteAtomicIn(root, "responses/k.json", []byte("one")))
	require.NoError(t, WriteAtomicIn(root, "responses/k.json", []byte("two")))
	data, err := os.ReadFile(filepath.Join(root, "responses", "k.json"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	st, err := os.Stat(filepath.Join(root, "responses", "k.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	entries, err := os.ReadDir(filepath.Join(root, "responses"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp file left behind")
}

func TestWriteAtomicAndAppendRefuseLinks(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(victim, link))
	assert.ErrorIs(t, WriteAtomic(link, []byte("x")), ErrLink)
	assert.ErrorIs(t, AppendLine(link, []byte("x")), ErrLink)
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
}

func TestTheRootItselfMayBeReachedThroughALink(t *testing.T) {
	t.Parallel()
	// The path to the root is the caller's (a TMPDIR behind a symlink, say); only what
	// lies below the root is checked.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "dispatch")
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, WriteAtomicIn(link, "responses/k.json", []byte("x")))
	require.NoError(t, AppendLine(filepath.Join(link, "manifest.jsonl"), []byte(`{"seq":1}`)))
	_, err := os.Stat(filepath.Join(real, "responses", "k.json"))
	assert.NoError(t, err)
	_, err = os.Stat(filepath.Join(real, "manifest.jsonl"))
	assert.NoError(t, err)
}

func TestReplaceStreamReplacesAndRefusesLinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	require.NoError(t, ReplaceStream(root, "cache", write("one")))
	require.NoError(t, ReplaceStream(root, "cache", write("two")))
	data, err := os.ReadFile(filepath.Join(root, "cache"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp file left behind")

	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(root, "link")))
	assert.ErrorIs(t, ReplaceStream(root, "link", write("x")), ErrLink)
	data, err = os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
}

func TestMkdirInAndMkdirNewRefusePlantedLinks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, root, outside string)
		rel   string
		want  string
	}{
		{"symlinked folder on the way", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "worktrees")))
		}, "worktrees/s1", "is a symbolic link"},
		{"symlink in the last place", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Mkdir(filepath.Join(root, "worktrees"), 0o755))
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "worktrees", "s1")))
		}, "worktrees/s1", "is a symbolic link"},
		{"dangling symlink in the last place", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Mkdir(filepath.Join(root, "worktrees"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(root, "worktrees", "s1")))
		}, "worktrees/s1", "is a symbolic link"},
		{"file in the place of a folder", func(t *testing.T, root, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "worktrees"), nil, 0o644))
		}, "worktrees/s1", "is not a directory"},
		{"escaping name", func(t *testing.T, root, outside string) {}, "../outside/x", "leaves the directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
			require.NoError(t, os.Mkdir(root, 0o755))
			require.NoError(t, os.Mkdir(outside, 0o755))
			c.plant(t, root, outside)
			for _, mk := range []func(string, string) error{MkdirIn, MkdirNew} {
				err := mk(root, c.rel)
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.want)
				assert.NotContains(t, err.Error(), "\n", "one line")
			}
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing created through the link")
		})
	}
}

func TestMkdirNewTellsATakenNameFromANewOne(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, MkdirNew(root, "a/b/c"))
	assert.ErrorIs(t, MkdirNew(root, "a/b/c"), fs.ErrExist)
	require.NoError(t, MkdirIn(root, "a/b/c"), "MkdirIn accepts a real directory that is there")
	require.NoError(t, MkdirIn(root, "a/d/e"))
	st, err := os.Lstat(filepath.Join(root, "a", "d", "e"))
	require.NoError(t, err)
	assert.True(t, st.IsDir())
}
