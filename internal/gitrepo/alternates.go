package gitrepo

import (
	"errors"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// altStorage is a repository's storage whose alternate object directories are
// opened once and kept. go-git's own storage opens a fresh store for an alternate
// every time an object is not found locally, and that store reads every pack index
// of the alternate again before it can answer: for an A/B worktree, whose history
// lives in the project's packs, that was one full index read per object.
//
// Lookups answer as go-git's do: an object already decoded comes from the shared
// object cache, others from the repository's own objects first, then
// each alternate in order; anything not found that way (an alternate repacked since
// its indexes were read, an alternate's own alternates) is left to go-git's lookup.
type altStorage struct {
	*filesystem.Storage
	dir   *dotgit.DotGit
	cache cache.Object

	mu     sync.Mutex
	opened bool
	alts   []*filesystem.ObjectStorage
}

func newAltStorage(st *filesystem.Storage, dir *dotgit.DotGit, c cache.Object) *altStorage {
	return &altStorage{Storage: st, dir: dir, cache: c}
}

// EncodedObject returns the object h of type t (any type for plumbing.AnyObject)
// from the repository or else from its alternates.
func (s *altStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	// go-git keeps every object it decodes, from here or an alternate, in this
	// cache, but looks there only after a file lookup; an object is its hash.
	if obj, ok := s.cache.Get(h); ok && (t == plumbing.AnyObject || obj.Type() == t) {
		return obj, nil
	}
	if err := s.Storage.HasEncodedObject(h); err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
		return s.Storage.EncodedObject(t, h)
	}
	if obj := s.fromAlternates(t, h); obj != nil {
		return obj, nil
	}
	return s.Storage.EncodedObject(t, h)
}

// fromAlternates looks h up in the kept alternate stores; nil when none has it.
func (s *altStorage) fromAlternates(t plumbing.ObjectType, h plumbing.Hash) plumbing.EncodedObject {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened {
		s.opened = true
		dirs, err := s.dir.Alternates()
		if err != nil {
			return nil
		}
		for _, d := range dirs {
			s.alts = append(s.alts, filesystem.NewObjectStorage(d, s.cache))
		}
	}
	for _, a := range s.alts {
		if obj, err := a.EncodedObject(t, h); err == nil {
			return obj
		}
	}
	return nil
}

// unwrapStorage returns the go-git filesystem storage under a repository's storer.
func unwrapStorage(s storer.Storer) (*filesystem.Storage, bool) {
	switch st := s.(type) {
	case *altStorage:
		return st.Storage, true
	case *cachedStorage:
		return st.Storage, true
	case *filesystem.Storage:
		return st, true
	}
	return nil, false
}
