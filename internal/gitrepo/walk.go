package gitrepo

import (
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// WalkStorage returns the object storage to walk a repository's history with: for a
// repository on disk, one that keeps its pack files open and its pack list cached
// (go-git otherwise reopens the pack for every commit it reads), and the function
// that closes it.
func WalkStorage(repo *git.Repository) (storer.EncodedObjectStorer, func()) {
	return walkStorage(repo, true)
}

// walkStorage is WalkStorage; packed false (the repository has no pack to read)
// leaves go-git's exclusive access off: what it caches then is only the list of
// every loose object, which costs a directory read of each of the 256 object
// directories to save none (each object is opened by its name either way), and an
// object is found or not found the same with it or without.
func walkStorage(repo *git.Repository, packed bool) (storer.EncodedObjectStorer, func()) {
	st, ok := unwrapStorage(repo.Storer)
	if !ok {
		return repo.Storer, func() {}
	}
	fast := filesystem.NewStorageWithOptions(st.Filesystem(), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true, ExclusiveAccess: packed})
	return fast, func() { _ = fast.Close() }
}
