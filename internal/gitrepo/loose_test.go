package gitrepo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
)

// TestLooseObjectsReadByGitAndGoGit: objects written concurrently by LooseObjects
// are read back, byte for byte, by go-git and by the git binary (which also checks
// them with fsck); writing one again changes nothing; no temporary file is left;
// Sync syncs what was written and then has nothing left to do.
func TestLooseObjectsReadByGitAndGoGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	l := NewLooseObjects(filepath.Join(dir, ".git", "objects"))

	contents := make([][]byte, 40)
	hashes := make([]plumbing.Hash, len(contents))
	var wg sync.WaitGroup
	for i := range contents {
		contents[i] = []byte(strings.Repeat(fmt.Sprintf("line %d of a blob\n", i), i+1))
		hashes[i] = plumbing.ComputeHash(plumbing.BlobObject, contents[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, l.Write(hashes[i], plumbing.BlobObject, contents[i]))
		}()
	}
	wg.Wait()
	require.NoError(t, l.Write(hashes[3], plumbing.BlobObject, contents[3]), "writing an object again")

	for i, h := range hashes {
		assert.True(t, l.Has(h))
		obj, err := repo.Storer.EncodedObject(plumbing.BlobObject, h)
		require.NoError(t, err, "go-git reads object %d", i)
		assert.Equal(t, int64(len(contents[i])), obj.Size())
		r, err := obj.Reader()
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, contents[i], got, "go-git reads object %d", i)
	}
	// git finds every object go-git does (type and size), and fsck checks that
	// each hashes to its name, so git reads the contents written.
	gitcheck.Repo(t, dir)
	assert.False(t, l.Has(plumbing.ComputeHash(plumbing.BlobObject, []byte("never written"))))

	tmps, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "tmp_obj_*"))
	require.NoError(t, err)
	assert.Empty(t, tmps, "temporary files left")
	synced, err := l.Sync()
	require.NoError(t, err)
	assert.Len(t, synced, len(hashes)+1, "every write is synced, the second write of one object too")
	assert.Empty(t, l.written, "Sync forgets what it synced")
	synced, err = l.Sync()
	require.NoError(t, err, "nothing to sync")
	assert.Empty(t, synced)
}

// TestLooseObjectsWriteFailsCleanly: a fan-out directory that cannot be made (a
// file is in its way) is an error naming the object, not a panic, and the
// object is not claimed to be there.
func TestLooseObjectsWriteFailsCleanly(t *testing.T) {
	t.Parallel()
	objects := filepath.Join(t.TempDir(), "objects")
	require.NoError(t, os.MkdirAll(objects, 0o755))
	data := []byte("blocked\n")
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	require.NoError(t, os.WriteFile(filepath.Join(objects, h.String()[:2]), nil, 0o644))
	l := NewLooseObjects(objects)
	err := l.Write(h, plumbing.BlobObject, data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), h.String()[:2])
	assert.False(t, l.Has(h))
}

// TestLooseObjectsSyncRetriesAfterAFailure: an object Sync cannot sync (its file
// is gone) is an error, and the next Sync tries it again instead of reporting
// success without it.
func TestLooseObjectsSyncRetriesAfterAFailure(t *testing.T) {
	t.Parallel()
	l := NewLooseObjects(filepath.Join(t.TempDir(), "objects"))
	data := []byte("synced later\n")
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	require.NoError(t, l.Write(h, plumbing.BlobObject, data))
	saved, err := os.ReadFile(l.Path(h))
	require.NoError(t, err)
	require.NoError(t, os.Remove(l.Path(h)))

	_, err = l.Sync()
	require.Error(t, err, "the object's file is gone")
	assert.Contains(t, err.Error(), h.String()[2:])

	require.NoError(t, os.WriteFile(l.Path(h), saved, 0o444))
	synced, err := l.Sync()
	require.NoError(t, err)
	assert.Equal(t, []string{l.Path(h)}, synced, "the object that failed is synced again")
	synced, err = l.Sync()
	require.NoError(t, err)
	assert.Empty(t, synced)
}
