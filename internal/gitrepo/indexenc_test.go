package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// gitIndex runs steps (git command lines) in a new repository with a few files and
// returns the bytes of the index git left.
func gitIndex(t *testing.T, steps ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_INDEX_VERSION=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("init", "-q")
	files := map[string]string{"a.txt": "a\n", "b/c.go": "package b\n", "b/d/e.md": "# e\n", "z": "", "new.txt": "new\n",
		"long/" + strings.Repeat("directory/", 30) + "name.txt": "long name\n"}
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	for _, s := range steps {
		run(strings.Fields(s)...)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	require.NoError(t, err)
	return data
}

// TestIndexEncoderMatchesGoGit: for indexes the git binary made (with a TREE
// extension, extended flags, version 4), encodeIndex writes the bytes go-git's
// encoder writes for the same decoded index; a split index go-git cannot decode.
func TestIndexEncoderMatchesGoGit(t *testing.T) {
	t.Parallel()
	testtools.Git(t, "git binary not installed")
	cases := map[string][]string{
		"added":          {"add -A"},
		"tree extension": {"add -A", "commit -q -m c", "write-tree"},
		"extended flags": {"add -A", "rm -q --cached new.txt", "commit -q -m c", "update-index --skip-worktree a.txt", "add -N new.txt"},
		"version 4":      {"add -A", "commit -q -m c", "update-index --index-version 4"},
		"split index":    {"add -A", "commit -q -m c", "update-index --split-index", "rm -q --cached z"},
	}
	for name, steps := range cases {
		data := gitIndex(t, steps...)
		if name == "extended flags" {
			require.Contains(t, string(data), "DIRC\x00\x00\x00\x03", "git wrote version 3")
		}
		if name == "tree extension" {
			require.Contains(t, string(data), "TREE", "git wrote a TREE extension")
		}
		if name == "split index" {
			// go-git does not read a split index (its "link" extension is
			// mandatory), so no such index ever reaches the encoder.
			assert.Error(t, index.NewDecoder(bytes.NewReader(data)).Decode(&index.Index{}))
			continue
		}
		decode := func() *index.Index {
			idx := &index.Index{}
			require.NoError(t, index.NewDecoder(bytes.NewReader(data)).Decode(idx), name)
			return idx
		}
		want, err := encodeWithGoGit(decode())
		require.NoError(t, err, name)
		got, err := encodeIndex(decode())
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
}

// TestIndexEncoderFallsBackToGoGit: conflicts, version 4, unsorted entries, a name
// over 0xfff bytes and pre-1970 entries give go-git's bytes (or its error).
func TestIndexEncoderFallsBackToGoGit(t *testing.T) {
	t.Parallel()
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	when := time.Unix(1_700_000_000, 123)
	mk := func() []*index.Entry {
		return []*index.Entry{
			{Name: "b", Hash: h, Stage: index.TheirMode, ModifiedAt: when},
			{Name: "b", Hash: h, Stage: index.OurMode, ModifiedAt: when},
			{Name: "a", Hash: h, Size: 3, Mode: 0o100644, CreatedAt: when},
			{Name: strings.Repeat("y/", 2500), Hash: h, SkipWorktree: true},
		}
	}
	for _, idx := range []func() *index.Index{
		func() *index.Index { return &index.Index{Version: 2, Entries: mk()} },
		func() *index.Index { return &index.Index{Version: 3, Entries: mk()[2:]} },
		func() *index.Index { return &index.Index{Version: 4, Entries: mk()[2:]} },
	} {
		want, err := encodeWithGoGit(idx())
		require.NoError(t, err)
		got, err := encodeIndex(idx())
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	old := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "a", Hash: h, ModifiedAt: time.Unix(-5, 0)}}}
	_, err := encodeIndex(old)
	assert.ErrorIs(t, err, index.ErrInvalidTimestamp)
}

// BenchmarkEncodeIndex compares encodeIndex with go-git's encoder on 20,000 entries.
func BenchmarkEncodeIndex(b *testing.B) {
	idx := &index.Index{Version: 2}
	for i := range 20000 {
		idx.Entries = append(idx.Entries, &index.Entry{Name: fmt.Sprintf("src/pkg%03d/file%05d.go", i/100, i),
			Mode: 0o100644, Size: uint32(i), ModifiedAt: time.Unix(1_700_000_000, int64(i))})
	}
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeIndex(idx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeWithGoGit(idx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
