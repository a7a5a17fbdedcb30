package gitrepo

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// LooseObjects writes loose objects into one git objects directory the way git
// does: "type size\0content", zlib-compressed, under objects/xx/yyyy…, through a
// uniquely named read-only temporary file renamed into place, so a crash never
// leaves a half-written object under its final name. It is safe for concurrent
// use. Compared with go-git's object writer it reuses its compressors (zlib's
// fastest level: git reads any level, and the object's id does not depend on it),
// creates each fan-out directory once and renames without resolving every path
// component through a chroot.
type LooseObjects struct {
	dir string

	mu      sync.Mutex
	dirs    map[string]bool // fan-out directories known to exist
	written []string        // objects written since the last Sync
}

// NewLooseObjects returns a writer of loose objects into objectsDir (a .git/objects
// directory).
func NewLooseObjects(objectsDir string) *LooseObjects {
	return &LooseObjects{dir: objectsDir, dirs: map[string]bool{}}
}

var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return w
}}

// ZlibWriter returns a pooled zlib writer at BestSpeed (what git's objects and
// replay's packs are compressed with), reset to write to w; PutZlibWriter returns
// it. A fresh one costs a megabyte of state.
func ZlibWriter(w io.Writer) *zlib.Writer {
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(w)
	return zw
}

// PutZlibWriter returns zw, closed or not, to the pool.
func PutZlibWriter(zw *zlib.Writer) { zlibWriters.Put(zw) }

// maxSyncs bounds the file syncs Sync has in flight at once.
const maxSyncs = 16

// looseTmp makes temporary object names unique within the process.
var looseTmp atomic.Uint64

// ObjectHeader returns git's object header for content of type t and size bytes:
// the bytes hashed (and, for a loose object, compressed) before the content.
func ObjectHeader(t plumbing.ObjectType, size int64) []byte {
	b := make([]byte, 0, 32)
	b = append(b, t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, size, 10)
	return append(b, 0)
}

// Path returns where the loose object h lives, whether or not it exists.
func (l *LooseObjects) Path(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(l.dir, s[:2], s[2:])
}

// Has reports whether h is stored as a loose object (packs are not looked at).
func (l *LooseObjects) Has(h plumbing.Hash) bool {
	_, err := os.Lstat(l.Path(h))
	return err == nil
}

// Write stores data, whose object id is h, as a loose object of type t. The caller
// vouches for h (it hashed data itself); an object already there is written again
// under the same name, which changes nothing a reader sees.
func (l *LooseObjects) Write(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	zw := ZlibWriter(&buf)
	zw.Write(ObjectHeader(t, int64(len(data))))
	zw.Write(data)
	err := zw.Close()
	PutZlibWriter(zw)
	if err != nil {
		return fmt.Errorf("compressing object %s: %w", h, err)
	}
	final := l.Path(h)
	dir := filepath.Dir(final)
	if err := l.EnsureDir(dir); err != nil {
		return err
	}
	tmp, err := l.createTemp(dir)
	if err != nil {
		return fmt.Errorf("writing object %s into %s: %w", h, dir, err)
	}
	_, werr := tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), final)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing object %s into %s: %w", h, dir, werr)
	}
	l.note(final)
	return nil
}

// createTemp creates a uniquely named temporary file in dir, read-only like git's
// objects.
func (l *LooseObjects) createTemp(dir string) (*os.File, error) {
	name := filepath.Join(dir, fmt.Sprintf("tmp_obj_%d_%d", os.Getpid(), looseTmp.Add(1)))
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
}

// TempFile creates a temporary file in the objects directory for an object written
// before its id is known (streamed: hashed while it is compressed); Adopt then
// gives it its name, or the caller removes it.
func (l *LooseObjects) TempFile() (*os.File, error) {
	if err := l.EnsureDir(l.dir); err != nil {
		return nil, err
	}
	f, err := l.createTemp(l.dir)
	if err != nil {
		return nil, fmt.Errorf("writing an object into %s: %w", l.dir, err)
	}
	return f, nil
}

// Adopt renames tmp, a closed file from TempFile holding object h, to h's loose
// name; on failure the caller still owns (and removes) tmp.
func (l *LooseObjects) Adopt(tmp string, h plumbing.Hash) error {
	final := l.Path(h)
	if err := l.EnsureDir(filepath.Dir(final)); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	l.note(final)
	return nil
}

// note records a loose object written, for the next Sync.
func (l *LooseObjects) note(path string) {
	l.mu.Lock()
	l.written = append(l.written, path)
	l.mu.Unlock()
}

// EnsureDir creates dir (a directory under the objects directory) unless this
// writer made or found it before.
func (l *LooseObjects) EnsureDir(dir string) error {
	l.mu.Lock()
	ok := l.dirs[dir]
	l.mu.Unlock()
	if ok {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	l.mu.Lock()
	l.dirs[dir] = true
	l.mu.Unlock()
	return nil
}

// Sync makes the loose objects written since its last call durable, every file
// and then every directory one was renamed into, and returns their paths. The file
// syncs run concurrently, so the filesystem commits them together; the directory
// syncs are best effort, as for a ref (a filesystem may refuse them). Whatever
// names the objects (a ref, a cache) must be written only after it returns
// without an error; after an error the next call tries the same objects again.
func (l *LooseObjects) Sync() ([]string, error) {
	l.mu.Lock()
	paths := l.written
	l.written = nil
	l.mu.Unlock()
	if len(paths) == 0 {
		return nil, nil
	}
	errs := make([]error, len(paths))
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range min(len(paths), maxSyncs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				if err := syncPath(paths[i]); err != nil {
					errs[i] = fmt.Errorf("syncing object %s: %w", paths[i], err)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			l.requeue(paths)
			return nil, err
		}
	}
	dirs := map[string]bool{l.dir: true} // new fan-out directories are entries of l.dir
	for _, p := range paths {
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		_ = syncPath(d)
	}
	return paths, nil
}

// requeue puts paths, a batch Sync could not make durable, back in front of the
// objects written since, so the next Sync tries them again. The whole batch goes
// back: its directories were not synced either.
func (l *LooseObjects) requeue(paths []string) {
	l.mu.Lock()
	l.written = append(paths, l.written...)
	l.mu.Unlock()
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
