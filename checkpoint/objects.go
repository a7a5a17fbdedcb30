package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectStore reads and writes git objects of the shadow repository. Loose objects
// are read and written directly (zlib, like git) so many goroutines can work at once;
// anything else (packed objects written by the git binary) goes through go-git's
// storage under a mutex.
type objectStore struct {
	dir string
	st  *filesystem.Storage

	mu sync.Mutex // guards st

	dirsMu sync.Mutex
	dirs   map[string]bool

	packsOnce sync.Once
	packs     bool
}

func newObjectStore(shadowDir string, st *filesystem.Storage) *objectStore {
	return &objectStore{dir: filepath.Join(shadowDir, "objects"), st: st, dirs: map[string]bool{}}
}

var zlibPool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return w
}}

// hashObject returns the git object id of data as an object of type t.
func hashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(objectHeader(t, len(data)))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

func objectHeader(t plumbing.ObjectType, size int) []byte {
	b := make([]byte, 0, 32)
	b = append(b, t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, 0)
}

func (o *objectStore) loosePath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

func (o *objectStore) hasPacks() bool {
	o.packsOnce.Do(func() {
		matches, _ := filepath.Glob(filepath.Join(o.dir, "pack", "*.idx"))
		o.packs = len(matches) > 0
	})
	return o.packs
}

// has reports whether the object h is in the store.
func (o *objectStore) has(h plumbing.Hash) bool {
	if _, err := os.Lstat(o.loosePath(h)); err == nil {
		return true
	}
	if !o.hasPacks() {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.HasEncodedObject(h) == nil
}

// write stores data as an object of type t unless it is already there, and returns
// its id.
func (o *objectStore) write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := hashObject(t, data)
	if o.has(h) {
		return h, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	zw := zlibPool.Get().(*zlib.Writer)
	zw.Reset(&buf)
	zw.Write(objectHeader(t, len(data)))
	zw.Write(data)
	err := zw.Close()
	zlibPool.Put(zw)
	if err != nil {
		return h, fmt.Errorf("compressing object %s: %w", h, err)
	}
	final := o.loosePath(h)
	dir := filepath.Dir(final)
	if err := o.ensureDir(dir); err != nil {
		return h, err
	}
	// A unique temporary name, created read-only like git's objects, then renamed:
	// a crash never leaves a half-written object under its final name.
	tmpName := filepath.Join(dir, fmt.Sprintf("tmp_obj_%d_%d", os.Getpid(), tmpCounter.Add(1)))
	tmp, err := os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return h, fmt.Errorf("writing object %s into %s: %w", h, dir, err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmpName, final)
	}
	if werr != nil {
		os.Remove(tmpName)
		return h, fmt.Errorf("writing object %s into %s: %w", h, dir, werr)
	}
	return h, nil
}

// tmpCounter makes temporary object names unique within the process.
var tmpCounter atomic.Uint64

func (o *objectStore) ensureDir(dir string) error {
	o.dirsMu.Lock()
	ok := o.dirs[dir]
	o.dirsMu.Unlock()
	if ok {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	o.dirsMu.Lock()
	o.dirs[dir] = true
	o.dirsMu.Unlock()
	return nil
}

// read returns the type and content of object h.
func (o *objectStore) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	f, err := os.Open(o.loosePath(h))
	if err == nil {
		defer f.Close()
		r, err := objfile.NewReader(f)
		if err != nil {
			return 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
		}
		defer r.Close()
		t, size, err := r.Header()
		if err != nil {
			return 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
		}
		return t, data, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, err := o.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s is missing from the shadow repository %s: %w", h, filepath.Dir(o.dir), err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return 0, nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return 0, nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	return obj.Type(), data, nil
}
