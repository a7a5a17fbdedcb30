package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// packedWithSharer returns a project whose history is in one pack (made by the git
// binary) and a second repository that borrows its objects through alternates.
func packedWithSharer(t testing.TB, files int) (project, sharer string, run func(args ...string) *exec.Cmd) {
	t.Helper()
	testtools.Git(t, "the git binary builds the packed fixture")
	root := t.TempDir()
	project, sharer = filepath.Join(root, "p"), filepath.Join(root, "wt")
	require.NoError(t, os.MkdirAll(project, 0o755))
	env := append(os.Environ(), "HOME="+root, "XDG_CONFIG_HOME="+root, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	run = func(args ...string) *exec.Cmd {
		c := exec.Command("git", args...)
		c.Dir, c.Env = project, env
		return c
	}
	for i := 0; i < files; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(project, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}, {"repack", "-adq"}} {
		out, err := run(args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(sharer, ".git", "objects", "info"), 0o755))
	out, err := exec.Command("git", "init", "-q", sharer).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.WriteFile(filepath.Join(sharer, ".git", "objects", "info", "alternates"),
		[]byte(filepath.Join(project, ".git", "objects")+"\n"), 0o644))
	return project, sharer, run
}

func headOf(t testing.TB, run func(args ...string) *exec.Cmd) plumbing.Hash {
	t.Helper()
	out, err := run("rev-parse", "HEAD").Output()
	require.NoError(t, err)
	return plumbing.NewHash(strings.TrimSpace(string(out)))
}

// readAll reads the commit at h, its tree and every blob in it.
func readAll(t testing.TB, s storer.EncodedObjectStorer, h plumbing.Hash) map[string]string {
	t.Helper()
	c, err := object.GetCommit(s, h)
	require.NoError(t, err)
	tree, err := c.Tree()
	require.NoError(t, err)
	got := map[string]string{}
	require.NoError(t, tree.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		got[f.Name] = s
		return err
	}))
	return got
}

func TestOpenReadsAlternatesLikeGoGit(t *testing.T) {
	t.Parallel()
	_, sharer, run := packedWithSharer(t, 12)
	first := headOf(t, run)
	repo, err := Open(sharer)
	require.NoError(t, err)

	got := readAll(t, repo.Storer, first)
	require.Len(t, got, 12)
	assert.Equal(t, "file 7\n", got["f007.txt"])

	// An object of the sharer's own is found there.
	local := repo.Storer.NewEncodedObject()
	local.SetType(plumbing.BlobObject)
	w, err := local.Writer()
	require.NoError(t, err)
	_, err = w.Write([]byte("only in the worktree\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	lh, err := repo.Storer.SetEncodedObject(local)
	require.NoError(t, err)
	b, err := object.GetBlob(repo.Storer, lh)
	require.NoError(t, err)
	assert.EqualValues(t, len("only in the worktree\n"), b.Size)

	// The wrong type and an unknown hash are not found, as in go-git.
	_, err = repo.Storer.EncodedObject(plumbing.TreeObject, first)
	assert.ErrorIs(t, err, plumbing.ErrObjectNotFound)
	_, err = repo.Storer.EncodedObject(plumbing.AnyObject, plumbing.NewHash(strings.Repeat("ab", 20)))
	assert.ErrorIs(t, err, plumbing.ErrObjectNotFound)

	// The project is repacked after the kept alternate read its indexes: the old
	// pack is gone and the new commit is only in the new pack. Both still resolve.
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(sharer), "p", "f100.txt"), []byte("later\n"), 0o644))
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "later"}, {"repack", "-adq"}} {
		out, err := run(args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	second := headOf(t, run)
	got = readAll(t, repo.Storer, second)
	assert.Len(t, got, 13)
	assert.Equal(t, "later\n", got["f100.txt"])
	c, err := repo.CommitObject(first)
	require.NoError(t, err)
	assert.Equal(t, "init\n", c.Message)
}

func TestWalkStorageSeesThroughOpen(t *testing.T) {
	t.Parallel()
	project, _, run := packedWithSharer(t, 3)
	repo, err := Open(project)
	require.NoError(t, err)
	walk, done := WalkStorage(repo)
	defer done()
	_, isFS := walk.(*filesystem.Storage)
	assert.True(t, isFS, "an opened repository gets the descriptor-keeping walk storage")
	assert.Len(t, readAll(t, walk, headOf(t, run)), 3)
}

// BenchmarkAlternateReads reads a commit's tree and files through alternates: with
// Open's kept alternate stores, and with go-git's storage, which reads the
// alternate's pack indexes again for every object.
func BenchmarkAlternateReads(b *testing.B) {
	_, sharer, run := packedWithSharer(b, 200)
	head := headOf(b, run)
	b.Run("kept", func(b *testing.B) {
		repo, err := Open(sharer)
		require.NoError(b, err)
		for i := 0; i < b.N; i++ {
			readAll(b, repo.Storer, head)
		}
	})
	b.Run("go-git", func(b *testing.B) {
		st := filesystem.NewStorageWithOptions(osfs.New(filepath.Join(sharer, ".git")), cache.NewObjectLRUDefault(),
			filesystem.Options{AlternatesFS: osfs.New("/", osfs.WithBoundOS())})
		repo, err := openOn(st, sharer)
		require.NoError(b, err)
		for i := 0; i < b.N; i++ {
			readAll(b, repo.Storer, head)
		}
	})
}

func openOn(st *filesystem.Storage, dir string) (*git.Repository, error) {
	return git.Open(st, osfs.New(dir))
}
