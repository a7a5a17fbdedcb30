package gitrepo

import (
	"bytes"
	"os"
	"strings"
	"time"

	"github.com/emirpasic/gods/trees/binaryheap"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// CommitInfo is what a history walk reads of a commit.
type CommitInfo struct {
	Hash    plumbing.Hash
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	// When is the committer time, in the committer's zone, as go-git decodes it.
	When    time.Time
	Message string
}

// WalkByCommitTime calls fn for the commits reachable from tip, in the order of
// go-git's object.NewCommitIterCTime (the same heap, so that ties keep their order),
// until fn returns storer.ErrStop (not an error) or another error (returned).
//
// Commits stored whole in a pack of a repository on disk are read by a lean reader
// (index lookup, inflate, the tree/parent/author/committer headers); everything else
// (loose objects, deltas, alternates, extra headers such as signatures, anything
// unusual) is read and decoded by go-git, so the result is go-git's own.
func WalkByCommitTime(repo *git.Repository, tip plumbing.Hash, fn func(*CommitInfo) error) error {
	src := newCommitSource(repo)
	defer src.close()
	c, err := src.commit(tip)
	if err != nil {
		return err
	}
	seen := map[plumbing.Hash]bool{}
	heap := binaryheap.NewWith(func(a, b interface{}) int {
		if a.(*CommitInfo).When.Before(b.(*CommitInfo).When) {
			return 1
		}
		return -1
	})
	heap.Push(c)
	for {
		v, ok := heap.Pop()
		if !ok {
			return nil
		}
		c := v.(*CommitInfo)
		if seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		for _, h := range c.Parents {
			if seen[h] {
				continue
			}
			pc, err := src.commit(h)
			if err != nil {
				return err
			}
			heap.Push(pc)
		}
		if err := fn(c); err != nil {
			if err == storer.ErrStop {
				return nil
			}
			return err
		}
	}
}

// commitSource reads commits through the lean pack reader, and through go-git for
// what that reader leaves.
type commitSource struct {
	repo     *git.Repository
	packs    []*packFile
	packed   bool // the repository holds a pack (read by go-git when not by the lean reader)
	z        inflater
	fallback storer.EncodedObjectStorer
	done     func()
}

func newCommitSource(repo *git.Repository) *commitSource {
	s := &commitSource{repo: repo}
	if st, ok := unwrapStorage(repo.Storer); ok {
		s.packs = openPacks(st.Filesystem())
		s.packed = len(s.packs) > 0 || hasPackFile(st.Filesystem())
	}
	return s
}

// close closes the packs and the fallback storage.
func (s *commitSource) close() {
	for _, p := range s.packs {
		p.close()
	}
	if s.done != nil {
		s.done()
	}
}

// commit returns the commit h.
func (s *commitSource) commit(h plumbing.Hash) (*CommitInfo, error) {
	if c := s.lean(h); c != nil {
		return c, nil
	}
	if s.fallback == nil {
		s.fallback, s.done = walkStorage(s.repo, s.packed)
	}
	c, err := object.GetCommit(s.fallback, h)
	if err != nil {
		return nil, err
	}
	return &CommitInfo{Hash: c.Hash, Tree: c.TreeHash, Parents: c.ParentHashes, When: c.Committer.When, Message: c.Message}, nil
}

// lean returns the commit h read from a pack, or nil when the lean reader does not
// handle it.
func (s *commitSource) lean(h plumbing.Hash) *CommitInfo {
	for _, p := range s.packs {
		off, ok, err := p.offset(h)
		if err != nil || !ok {
			continue
		}
		typ, data, err := s.z.object(p, off)
		if err != nil || typ != plumbing.CommitObject {
			return nil
		}
		return ParseCommit(h, data)
	}
	return nil
}

// ParseCommit decodes a commit of the plain shape: a tree line, parent lines, an
// author line, a committer line, a blank line and the message. Anything else (extra
// headers, odd spacing, a missing line end) returns nil, for go-git to decode.
func ParseCommit(h plumbing.Hash, b []byte) *CommitInfo {
	line, rest, ok := cutLine(b)
	if !ok || !hexHeader(line, "tree ") {
		return nil
	}
	c := &CommitInfo{Hash: h, Tree: plumbing.NewHash(string(line[len("tree "):]))}
	for {
		if line, rest, ok = cutLine(rest); !ok {
			return nil
		}
		if !bytes.HasPrefix(line, []byte("parent ")) {
			break
		}
		if !hexHeader(line, "parent ") {
			return nil
		}
		c.Parents = append(c.Parents, plumbing.NewHash(string(line[len("parent "):])))
	}
	if !bytes.HasPrefix(line, []byte("author ")) {
		return nil
	}
	if line, rest, ok = cutLine(rest); !ok || !bytes.HasPrefix(line, []byte("committer ")) {
		return nil
	}
	if len(rest) == 0 || rest[0] != '\n' {
		return nil
	}
	var sig object.Signature
	sig.Decode(line[len("committer "):])
	c.When = sig.When
	c.Message = string(rest[1:])
	return c
}

// cutLine splits b after its first line end; false when b has none.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// hexHeader says whether line is key followed by exactly 40 lowercase hex digits.
func hexHeader(line []byte, key string) bool {
	if len(line) != len(key)+40 || !bytes.HasPrefix(line, []byte(key)) {
		return false
	}
	for _, c := range line[len(key):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// hasPackFile reports whether the repository's pack directory holds a pack file
// (one the lean reader did not open: its index unreadable, the directory refused),
// or cannot be listed: go-git may read it, so its exclusive access stays on.
func hasPackFile(fs billy.Filesystem) bool {
	entries, err := fs.ReadDir(packDir)
	if err != nil {
		return !os.IsNotExist(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pack") {
			return true
		}
	}
	return false
}
