package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// cacheFile is the name, inside the shadow git dir, of the size/mtime cache that lets
// a snapshot skip re-hashing files that did not change.
const cacheFile = "replay-stat-cache"

// cacheMagic starts a cache of the first format, which was fsynced before it was
// renamed into place and carries no checksum; cacheMagicSummed starts one that ends
// with the CRC-32C of everything before it (see saveCache).
const (
	cacheMagic       = "replay-stat-cache 1\n"
	cacheMagicSummed = "replay-stat-cache 2\n"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// racyWindow is how close to the snapshot start a file's mtime may be before its
// cached hash is distrusted: a file written in the same clock tick as the snapshot
// could change again without changing its mtime.
const racyWindow int64 = 2e9

type cacheEntry struct {
	mode  filemode.FileMode
	size  int64
	mtime int64
	hash  plumbing.Hash
}

// trusted reports whether e's hash holds for a file of that mode, size and mtime,
// for a cache taken at start: its stat data is the one recorded and the record is
// not racy.
func (e *cacheEntry) trusted(mode filemode.FileMode, size, mtime, start int64) bool {
	return e.mode == mode && e.size == size && e.mtime == mtime && mtime < start-racyWindow
}

// statCache is the cache as read: its records sorted by path, the paths pointing
// into the file's bytes (no string or map entry per file).
type statCache struct {
	start int64
	data  []byte
	recs  []cacheRec
	next  int // the record after the last one found: lookups in path order hit it
}

type cacheRec struct {
	off, end uint32 // the path, data[off:end]
	cacheEntry
}

func (c *statCache) name(i int) []byte { return c.data[c.recs[i].off:c.recs[i].end] }

// find returns the record of rel. Walking the files in path order (as a snapshot
// does) finds each at the position after the previous one, without a search.
func (c *statCache) find(rel string) (*cacheRec, bool) {
	i := c.next
	if i >= len(c.recs) || string(c.name(i)) != rel {
		i = sort.Search(len(c.recs), func(i int) bool { return string(c.name(i)) >= rel })
		if i >= len(c.recs) || string(c.name(i)) != rel {
			return nil, false
		}
	}
	c.next = i + 1
	return &c.recs[i], true
}

// lookup returns the cached hash of a file when its mode, size and mtime are the
// ones recorded and the record is not racy.
func (c *statCache) lookup(rel string, mode filemode.FileMode, size, mtime int64) (plumbing.Hash, bool) {
	e, ok := c.find(rel)
	if !ok || !e.trusted(mode, size, mtime, c.start) {
		return plumbing.ZeroHash, false
	}
	return e.hash, true
}

// loadCache reads the cache; a missing or damaged cache is an empty one.
func (s *Store) loadCache() *statCache {
	data, err := runfile.ReadFile(filepath.Join(s.shadowDir, cacheFile), runfile.StatCache)
	if err != nil {
		return &statCache{}
	}
	return parseCache(data)
}

// parseCache decodes a cache file; damaged data is an empty cache. A summed cache
// whose checksum does not match (torn by a crash: it is written without fsync) is
// dropped whole.
func parseCache(data []byte) *statCache {
	c := &statCache{}
	if len(data) >= math.MaxUint32 {
		return c
	}
	if bytes.HasPrefix(data, []byte(cacheMagicSummed)) {
		body := len(data) - crc32.Size
		if body < len(cacheMagicSummed) || crc32.Checksum(data[:body], castagnoli) != binary.BigEndian.Uint32(data[body:]) {
			return c
		}
		data = data[:body:body]
	} else if !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return c
	}
	var err error
	start, n, pos, ok := readCacheHeader(data, uint64(len(data)))
	if !ok {
		return c
	}
	recs := make([]cacheRec, n)
	sorted := true
	for i := range recs {
		if pos, err = readCacheRec(data, pos, &recs[i]); err != nil {
			return c
		}
		if i > 0 && sorted {
			sorted = bytes.Compare(data[recs[i-1].off:recs[i-1].end], data[recs[i].off:recs[i].end]) < 0
		}
	}
	c.start, c.data, c.recs = start, data, recs
	if !sorted { // not written by this version: sort it once
		sort.Slice(recs, func(i, j int) bool { return bytes.Compare(c.name(i), c.name(j)) < 0 })
	}
	return c
}

var errDamagedCache = errors.New("damaged cache")

// readCacheHeader decodes what follows a cache file's magic (both formats' magics
// have the same length) at the start of head: the cache's start time and its
// record count, at most limit. It returns where the records begin.
func readCacheHeader(head []byte, limit uint64) (start int64, n uint64, pos int, ok bool) {
	pos = len(cacheMagic)
	start, k := binary.Varint(head[pos:])
	if k <= 0 {
		return 0, 0, 0, false
	}
	pos += k
	n, k = binary.Uvarint(head[pos:])
	if k <= 0 || n > limit {
		return 0, 0, 0, false
	}
	return start, n, pos + k, true
}

// readCacheRec decodes the record at data[pos:] into r and returns where the next
// one starts.
func readCacheRec(data []byte, pos int, r *cacheRec) (int, error) {
	l, k := binary.Uvarint(data[pos:])
	if k <= 0 || l > uint64(len(data)-pos-k) {
		return 0, errDamagedCache
	}
	pos += k
	r.off, r.end = uint32(pos), uint32(pos+int(l))
	pos += int(l)
	mode, k := binary.Uvarint(data[pos:])
	if k <= 0 || mode > math.MaxUint32 {
		return 0, errDamagedCache
	}
	pos += k
	r.mode = filemode.FileMode(mode)
	if r.size, k = binary.Varint(data[pos:]); k <= 0 {
		return 0, errDamagedCache
	}
	pos += k
	if r.mtime, k = binary.Varint(data[pos:]); k <= 0 {
		return 0, errDamagedCache
	}
	pos += k
	if len(data)-pos < len(r.hash) {
		return 0, errDamagedCache
	}
	copy(r.hash[:], data[pos:])
	return pos + len(r.hash), nil
}

// saveCache writes the cache for files, recorded at start (Unix nanoseconds).
//
// The cache is written after the objects it names are durable (the snapshot's pack
// is synced first), to a temporary file renamed over the old cache, without an
// fsync: a crash can leave the old cache (whose objects are durable too, and whose
// records still only match files whose stat data is unchanged), the new one, or a
// file with missing or garbage blocks, which fails the checksum and is dropped. A
// dropped cache costs a full re-hash, never a wrong hash.
func (s *Store) saveCache(start int64, files []*fileState) error {
	_, err := s.saveCacheKey(start, files, nil)
	return err
}

// saveCacheKey is saveCache returning the key of the cache written. When ready is
// not nil, the cache is renamed into place only once ready gives nil (the objects
// it names are durable), and not at all when it gives an error.
func (s *Store) saveCacheKey(start int64, files []*fileState, ready <-chan error) (statCacheKey, error) {
	path := filepath.Join(s.shadowDir, cacheFile)
	var sum uint32
	err := safewrite.ReplaceStream(s.shadowDir, cacheFile, func(out io.Writer) error {
		var err error
		if sum, err = writeCache(out, start, files); err != nil {
			return err
		}
		if ready != nil {
			return <-ready
		}
		return nil
	})
	if err != nil {
		return statCacheKey{}, fmt.Errorf("%s: writing the stat cache: %w", path, err)
	}
	return statCacheKey{start: start, sum: sum}, nil
}

// writeCache encodes the cache for files, recorded at start, to out, followed by
// the CRC-32C of the bytes before it, which it returns.
func writeCache(out io.Writer, start int64, files []*fileState) (uint32, error) {
	sum := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(out, sum), 256<<10)
	w.WriteString(cacheMagicSummed)
	var b [binary.MaxVarintLen64]byte
	w.Write(b[:binary.PutVarint(b[:], start)])
	w.Write(b[:binary.PutUvarint(b[:], uint64(len(files)))])
	for _, f := range files {
		w.Write(b[:binary.PutUvarint(b[:], uint64(len(f.rel)))])
		w.WriteString(f.rel)
		w.Write(b[:binary.PutUvarint(b[:], uint64(f.mode))])
		w.Write(b[:binary.PutVarint(b[:], f.size)])
		w.Write(b[:binary.PutVarint(b[:], f.mtime)])
		w.Write(f.hash[:])
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	_, err := out.Write(sum.Sum(nil))
	return sum.Sum32(), err
}

// cacheSave is a stat cache being written beside the trees and the pack.
type cacheSave struct {
	ready chan error
	done  chan struct{}
	key   statCacheKey
	err   error
}

// startCacheSave starts writing the cache for files, recorded at start; finish
// says whether it may be renamed into place.
func (s *Store) startCacheSave(start int64, files []*fileState) *cacheSave {
	c := &cacheSave{ready: make(chan error, 1), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.key, c.err = s.saveCacheKey(start, files, c.ready)
	}()
	return c
}

// finish hands over the outcome of completing the pack the cache names (nil: its
// objects are durable, and the cache is renamed into place; else the cache is
// dropped and packErr returned), waits for the cache, and returns its key.
func (c *cacheSave) finish(packErr error) (statCacheKey, error) {
	c.ready <- packErr
	<-c.done
	if packErr != nil {
		return statCacheKey{}, packErr
	}
	return c.key, c.err
}
