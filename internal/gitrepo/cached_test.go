package gitrepo

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingFS counts the files opened through it.
type countingFS struct {
	billy.Filesystem
	opens *atomic.Int64
}

func (c countingFS) Open(name string) (billy.File, error) {
	c.opens.Add(1)
	return c.Filesystem.Open(name)
}

func (c countingFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	c.opens.Add(1)
	return c.Filesystem.OpenFile(name, flag, perm)
}

// TestCachedStorageAnswersAsGoGit: PlainOpen's storage answers every lookup
// (each object of a history by its own type, by any type, by a wrong type, a
// missing hash; loose and packed) as go-git's storage over the same directory
// does, twice over, and a loose object read once is not opened again.
func TestCachedStorageAnswersAsGoGit(t *testing.T) {
	t.Parallel()
	work := filepath.Join(t.TempDir(), "work")
	repo, err := git.PlainInit(work, false)
	require.NoError(t, err)
	w, err := repo.Worktree()
	require.NoError(t, err)
	var commits []plumbing.Hash
	for i, c := range []string{"one\n", "two\n", "three\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(work, "d"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(work, "d", "f"), []byte(c), 0o644))
		_, err = w.Add("d/f")
		require.NoError(t, err)
		sig := &object.Signature{Name: "t", Email: "t@t", When: time.Unix(int64(i+1)*100, 0).UTC()}
		h, err := w.Commit(c, &git.CommitOptions{Author: sig, Committer: sig})
		require.NoError(t, err)
		commits = append(commits, h)
	}
	var hashes []plumbing.Hash
	iter, err := repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	require.NoError(t, err)
	require.NoError(t, iter.ForEach(func(o plumbing.EncodedObject) error {
		hashes = append(hashes, o.Hash())
		return nil
	}))
	require.Len(t, hashes, 12) // three commits, their six trees and three blobs
	hashes = append(hashes, plumbing.NewHash("0123456789012345678901234567890123456789"))
	types := []plumbing.ObjectType{plumbing.AnyObject, plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject}

	compare := func(what string) {
		want, err := git.PlainOpen(work)
		require.NoError(t, err)
		got, err := PlainOpen(work)
		require.NoError(t, err)
		_, cached := got.Storer.(*cachedStorage)
		require.True(t, cached, what)
		for range 2 {
			for _, h := range hashes {
				for _, typ := range types {
					wo, werr := want.Storer.EncodedObject(typ, h)
					gobj, gerr := got.Storer.EncodedObject(typ, h)
					require.Equal(t, werr, gerr, "%s %s %s", what, h, typ)
					if werr != nil {
						continue
					}
					assert.Equal(t, wo.Hash(), gobj.Hash(), what)
					assert.Equal(t, wo.Type(), gobj.Type(), what)
					assert.Equal(t, wo.Size(), gobj.Size(), what)
				}
			}
			c, err := got.CommitObject(commits[2])
			require.NoError(t, err)
			assert.Equal(t, "three\n", c.Message, what)
		}
	}
	compare("loose")

	// a loose object decoded once comes from the cache: its file is not opened again
	var opens atomic.Int64
	objects := cache.NewObjectLRUDefault()
	st := &cachedStorage{Storage: filesystem.NewStorage(countingFS{osfs.New(filepath.Join(work, ".git")), &opens}, objects), cache: objects}
	_, err = st.EncodedObject(plumbing.CommitObject, commits[0])
	require.NoError(t, err)
	first := opens.Load()
	require.Positive(t, first)
	for range 3 {
		o, err := st.EncodedObject(plumbing.AnyObject, commits[0])
		require.NoError(t, err)
		assert.Equal(t, commits[0], o.Hash())
		_, err = st.EncodedObject(plumbing.TreeObject, commits[0])
		assert.ErrorIs(t, err, plumbing.ErrObjectNotFound)
	}
	// the wrong type asked is go-git's lookup again (an open each), the right one none
	assert.Equal(t, first+3, opens.Load())

	// the same answers with every object packed
	require.NoError(t, repo.RepackObjects(&git.RepackConfig{}))
	compare("packed")
}
