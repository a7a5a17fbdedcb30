package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// The tree cache (git's cache-tree idea) remembers the tree id of every directory
// of the last snapshot, so the next one re-serializes, hashes and looks up only the
// directories on the paths of what changed. It is only ever used together with the
// stat cache it was written with: it names that cache's start and checksum, and a
// snapshot trusts a directory's remembered tree only when the merge with that very
// stat cache found no file under the directory added, removed, or with other stat
// data than recorded (whose hash, mode and path are then the recorded ones, which
// are the ones the remembered tree was built from). Any doubt (a missing, torn or
// foreign file, a stat cache saved since by anyone) drops it whole: a full build.
//
// It is written, without fsync, after the stat cache, itself written after the
// objects it names are durable: a crash leaves the old tree cache (which names the
// old stat cache, so it is dropped beside the new one), the new one, or a damaged
// file that fails its checksum.
const (
	treeCacheFile  = "replay-tree-cache"
	treeCacheMagic = "replay-tree-cache 1\n"
)

// statCacheKey names one saved stat cache: its start and its CRC-32C.
type statCacheKey struct {
	start int64
	sum   uint32
}

// treeCache is a tree cache as read: directories in byte order of their paths
// ("" is the root), and their tree ids.
type treeCache struct {
	key   statCacheKey
	dirs  []string
	trees []plumbing.Hash
}

// find returns the index of dir, or -1.
func (c *treeCache) find(dir string) int {
	i := sort.SearchStrings(c.dirs, dir)
	if i < len(c.dirs) && c.dirs[i] == dir {
		return i
	}
	return -1
}

// under returns the range of the directories under the one at i: dir/... sorts
// from dir+"/" to dir+"0" ('/' + 1), not always right after dir ("a.b" sorts
// between "a" and "a/b").
func (c *treeCache) under(i int) (int, int) {
	if c.dirs[i] == "" {
		return i + 1, len(c.dirs)
	}
	return sort.SearchStrings(c.dirs, c.dirs[i]+"/"), sort.SearchStrings(c.dirs, c.dirs[i]+"0")
}

// loadTreeCache reads the tree cache; nil when it is missing, damaged, or was not
// written with the stat cache key names.
func (s *Store) loadTreeCache(key statCacheKey) *treeCache {
	data, err := runfile.ReadFile(filepath.Join(s.shadowDir, treeCacheFile), runfile.StatCache)
	if err != nil {
		return nil
	}
	c := parseTreeCache(data)
	if c == nil || c.key != key {
		return nil
	}
	return c
}

// parseTreeCache decodes a tree cache file; nil when it is damaged in any way.
func parseTreeCache(data []byte) *treeCache {
	body := len(data) - crc32.Size
	if body < len(treeCacheMagic) || !bytes.HasPrefix(data, []byte(treeCacheMagic)) ||
		crc32.Checksum(data[:body], castagnoli) != binary.BigEndian.Uint32(data[body:]) {
		return nil
	}
	data = data[len(treeCacheMagic):body]
	c := &treeCache{}
	var k int
	if c.key.start, k = binary.Varint(data); k <= 0 || len(data) < k+4 {
		return nil
	}
	c.key.sum = binary.BigEndian.Uint32(data[k:])
	data = data[k+4:]
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return nil
	}
	data = data[k:]
	c.dirs, c.trees = make([]string, n), make([]plumbing.Hash, n)
	for i := range c.dirs {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) || len(data)-k-int(l) < len(plumbing.ZeroHash) {
			return nil
		}
		c.dirs[i] = string(data[k : k+int(l)])
		data = data[k+int(l):]
		copy(c.trees[i][:], data)
		data = data[len(plumbing.ZeroHash):]
		if i > 0 && c.dirs[i-1] >= c.dirs[i] {
			return nil
		}
	}
	if len(data) != 0 {
		return nil
	}
	return c
}

// saveTreeCache writes the directories' trees of a snapshot whose stat cache is key.
func (s *Store) saveTreeCache(key statCacheKey, dirs []dirTree) error {
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].path < dirs[j].path })
	err := safewrite.ReplaceStream(s.shadowDir, treeCacheFile, func(out io.Writer) error {
		sum := crc32.New(castagnoli)
		w := bufio.NewWriterSize(io.MultiWriter(out, sum), 64<<10)
		w.WriteString(treeCacheMagic)
		var b [binary.MaxVarintLen64]byte
		w.Write(b[:binary.PutVarint(b[:], key.start)])
		w.Write(binary.BigEndian.AppendUint32(nil, key.sum))
		w.Write(b[:binary.PutUvarint(b[:], uint64(len(dirs)))])
		for _, d := range dirs {
			w.Write(b[:binary.PutUvarint(b[:], uint64(len(d.path)))])
			w.WriteString(d.path)
			w.Write(d.tree[:])
		}
		if err := w.Flush(); err != nil {
			return err
		}
		_, err := out.Write(sum.Sum(nil))
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: writing the tree cache: %w", filepath.Join(s.shadowDir, treeCacheFile), err)
	}
	return nil
}

// dirTree is one directory of a built tree and its tree id.
type dirTree struct {
	path string
	tree plumbing.Hash
}

// treeReuse is what buildSortedTree may take from a tree cache, and what it
// records for the next one.
type treeReuse struct {
	prev  statCacheKey    // the stat cache the snapshot merged with
	valid bool            // prev is set: the snapshot merged with a whole stat cache
	cache *treeCache      // nil: build every tree
	dirty map[string]bool // directories with a change under them (and their parents)
	built []dirTree       // every directory of the tree built, with its tree
}

// reuse returns the remembered tree of dir when nothing under it changed, and
// records it and the remembered trees under it as part of the new tree.
func (r *treeReuse) reuse(dir string) (plumbing.Hash, bool) {
	if r == nil || r.cache == nil || r.dirty[dir] {
		return plumbing.ZeroHash, false
	}
	i := r.cache.find(dir)
	if i < 0 {
		return plumbing.ZeroHash, false
	}
	r.built = append(r.built, dirTree{dir, r.cache.trees[i]})
	from, to := r.cache.under(i)
	for j := from; j < to; j++ {
		r.built = append(r.built, dirTree{r.cache.dirs[j], r.cache.trees[j]})
	}
	return r.cache.trees[i], true
}

// record notes the tree written for dir.
func (r *treeReuse) record(dir string, h plumbing.Hash) {
	if r != nil {
		r.built = append(r.built, dirTree{dir, h})
	}
}

// dirtyDirs returns the directories (with all their parents, the root "" included)
// of the paths in changed and gone.
func dirtyDirs(changed []*fileState, gone []string) map[string]bool {
	dirty := map[string]bool{}
	mark := func(p string) {
		for {
			slash := strings.LastIndexByte(p, '/')
			if slash < 0 {
				dirty[""] = true
				return
			}
			p = p[:slash]
			if dirty[p] {
				return
			}
			dirty[p] = true
		}
	}
	for _, f := range changed {
		mark(f.rel)
	}
	for _, p := range gone {
		mark(p)
	}
	return dirty
}
