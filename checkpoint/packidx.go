package checkpoint

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/replaytool/replay/internal/gitrepo"
)

// packIndex finds an object's offset in one pack.
type packIndex interface {
	FindOffset(h plumbing.Hash) (int64, error)
}

var (
	_ packIndex = (*gitrepo.PackIndex)(nil)   // an index read from disk, looked up in place
	_ packIndex = (*idxfile.MemoryIndex)(nil) // the index of a pack just written
)

// openIdx opens the pack index at path: looked up in place, not decoded into
// memory (a snapshot asks a few hundred lookups of indexes of a hundred thousand
// objects; decoding them cost more than it saved).
func openIdx(path string) (packIndex, error) { return gitrepo.OpenPackIndex(path) }
