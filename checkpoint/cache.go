package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/replaytool/replay/internal/fsutil"
	"github.com/replaytool/replay/internal/runfile"
)

// cacheFile is the name, inside the shadow git dir, of the size/mtime cache that lets
// a snapshot skip re-hashing files that did not change.
const cacheFile = "replay-stat-cache"

const cacheMagic = "replay-stat-cache 1\n"

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

type statCache struct {
	start   int64
	entries map[string]cacheEntry
}

// lookup returns the cached hash of a file when its mode, size and mtime are the
// ones recorded and the record is not racy.
func (c *statCache) lookup(rel string, mode filemode.FileMode, size, mtime int64) (plumbing.Hash, bool) {
	e, ok := c.entries[rel]
	if !ok || e.mode != mode || e.size != size || e.mtime != mtime || mtime >= c.start-racyWindow {
		return plumbing.ZeroHash, false
	}
	return e.hash, true
}

// loadCache reads the cache; a missing or damaged cache is an empty one.
func (s *Store) loadCache() *statCache {
	c := &statCache{entries: map[string]cacheEntry{}}
	data, err := runfile.ReadFile(filepath.Join(s.shadowDir, cacheFile), runfile.StatCache)
	if err != nil || !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return c
	}
	r := bytes.NewReader(data[len(cacheMagic):])
	start, err := binary.ReadVarint(r)
	if err != nil {
		return c
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(len(data)) {
		return c
	}
	entries := make(map[string]cacheEntry, n)
	for i := uint64(0); i < n; i++ {
		rel, e, err := readCacheEntry(r)
		if err != nil {
			return c
		}
		entries[rel] = e
	}
	c.start, c.entries = start, entries
	return c
}

func readCacheEntry(r *bytes.Reader) (string, cacheEntry, error) {
	var e cacheEntry
	l, err := binary.ReadUvarint(r)
	if err != nil || l > uint64(r.Len()) {
		return "", e, errors.New("damaged cache")
	}
	name := make([]byte, l)
	if _, err := io.ReadFull(r, name); err != nil {
		return "", e, err
	}
	mode, err := binary.ReadUvarint(r)
	if err != nil {
		return "", e, err
	}
	if e.size, err = binary.ReadVarint(r); err != nil {
		return "", e, err
	}
	if e.mtime, err = binary.ReadVarint(r); err != nil {
		return "", e, err
	}
	if _, err := io.ReadFull(r, e.hash[:]); err != nil {
		return "", e, err
	}
	e.mode = filemode.FileMode(mode)
	return string(name), e, nil
}

// saveCache writes the cache for files, recorded at start (Unix nanoseconds).
func (s *Store) saveCache(start int64, files []*fileState) error {
	path := filepath.Join(s.shadowDir, cacheFile)
	err := fsutil.WriteAtomicStream(s.shadowDir, cacheFile, func(out io.Writer) error {
		return writeCache(out, start, files)
	})
	if err != nil {
		return fmt.Errorf("%s: writing the stat cache: %w", path, err)
	}
	return nil
}

// writeCache encodes the cache for files, recorded at start, to out.
func writeCache(out io.Writer, start int64, files []*fileState) error {
	w := bufio.NewWriterSize(out, 256<<10)
	w.WriteString(cacheMagic)
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
	return w.Flush()
}
