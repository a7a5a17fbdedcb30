package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/runfile"
)

// cacheWindow is how much of the cache file mergeCache looks at at once: any
// record (a path is at most a few KiB) fits in it many times.
const cacheWindow = 64 << 10

// mergeCache is the cache lookup for files in strictly increasing path order (a
// snapshot's list), reading the cache file once through a small buffer and
// comparing it with the list as a merge, instead of reading it whole and decoding
// every record into memory. It fills in the hash of every file the cache holds
// with the same mode, size and mtime and that is not racy (lookup's rule), and
// returns the merge: the files left to hash (todo), how many records the cache
// holds and, when the merge was done (valid), the key of the cache file and the
// paths it has that list has not.
//
// ok is false, and nothing is filled in, when the cache is not one it can stream
// (the first format, or records out of order): the caller reads it with
// loadCache. A cache that is missing, damaged or whose checksum does not match
// is an empty one, as for loadCache: every file is left to hash.
func (s *Store) mergeCache(list []*fileState) (*cacheMerge, bool) {
	r, err := runfile.Open(filepath.Join(s.shadowDir, cacheFile), runfile.StatCache)
	if err != nil {
		return &cacheMerge{todo: list}, true
	}
	defer r.Close()
	m := &cacheMerge{list: list}
	res := m.run(r, r.Stat().Size())
	if res == mergeDone {
		m.valid = true
		return m, true
	}
	for _, f := range list { // drop every hash taken from it
		f.hash = plumbing.ZeroHash
	}
	if res == mergeFallback {
		return &cacheMerge{}, false
	}
	return &cacheMerge{todo: list}, true // damaged: an empty cache
}

type mergeResult int

const (
	mergeDone mergeResult = iota
	mergeDamaged
	mergeFallback
)

// cacheMerge walks a cache file's records and a list of files, both in path order.
type cacheMerge struct {
	list    []*fileState
	next    int // the first file of list not yet compared
	todo    []*fileState
	records int
	last    []byte // the previous record's path

	valid bool         // the whole file was read and its checksum matched
	key   statCacheKey // the file's start and checksum, once valid
	gone  []string     // the paths of records no file of list has
}

// run merges the cache file read from r, of size bytes, with the list.
func (m *cacheMerge) run(r io.Reader, size int64) mergeResult {
	body := size - crc32.Size
	if body < int64(len(cacheMagicSummed)) {
		return mergeDamaged
	}
	sum := crc32.New(castagnoli)
	// Peek refills only when less than a window is left: a read per window.
	br := bufio.NewReaderSize(&io.LimitedReader{R: r, N: body}, 4*cacheWindow)
	head, _ := br.Peek(len(cacheMagicSummed) + 2*binary.MaxVarintLen64)
	if !bytes.HasPrefix(head, []byte(cacheMagicSummed)) {
		return mergeFallback // the first format: loadCache reads it
	}
	start, n, pos, ok := readCacheHeader(head, uint64(size))
	if !ok {
		return mergeDamaged
	}
	sum.Write(head[:pos])
	br.Discard(pos)
	m.records = int(n)
	for range n {
		win, _ := br.Peek(cacheWindow)
		var rec cacheRec
		end, err := readCacheRec(win, 0, &rec)
		if err != nil && len(win) == cacheWindow {
			return mergeFallback // a record longer than the window
		}
		if err != nil {
			return mergeDamaged
		}
		name := win[rec.off:rec.end]
		if m.last != nil && bytes.Compare(m.last, name) >= 0 {
			return mergeFallback
		}
		m.last = append(m.last[:0], name...)
		m.match(name, &rec.cacheEntry, start)
		sum.Write(win[:end])
		br.Discard(end)
	}
	var trailer [crc32.Size]byte
	if _, err := br.Peek(1); err != io.EOF {
		return mergeDamaged // more bytes than records
	}
	// r is at the body's end: the checksum follows.
	if _, err := io.ReadFull(r, trailer[:]); err != nil || binary.BigEndian.Uint32(trailer[:]) != sum.Sum32() {
		return mergeDamaged
	}
	m.key = statCacheKey{start: start, sum: sum.Sum32()}
	m.todo = append(m.todo, m.list[m.next:]...)
	return mergeDone
}

// match compares the record of path name with the list: files before it are not
// in the cache; the file of that path takes its hash unless its stat data changed
// or the record is racy.
func (m *cacheMerge) match(name []byte, e *cacheEntry, start int64) {
	for m.next < len(m.list) && m.list[m.next].rel < string(name) {
		m.todo = append(m.todo, m.list[m.next])
		m.next++
	}
	if m.next == len(m.list) || m.list[m.next].rel != string(name) {
		m.gone = append(m.gone, string(name))
		return
	}
	f := m.list[m.next]
	m.next++
	if !e.trusted(f.mode, f.size, f.mtime, start) {
		m.todo = append(m.todo, f)
		return
	}
	f.hash = e.hash
}
