package checkpoint

import (
	"bufio"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/runfile"
)

// objectStore reads and writes git objects of the shadow repository. Loose objects
// are read and written directly (zlib, like git) so many goroutines can work at once;
// anything else (packed objects written by the git binary) goes through go-git's
// storage under a mutex.
type objectStore struct {
	dir string
	st  *filesystem.Storage

	mu sync.Mutex // guards st

	loose *gitrepo.LooseObjects // loose objects written, with their fan-out directories

	packMu      sync.RWMutex // guards packsLoaded, packList and packHolds
	packsLoaded bool
	packList    []*packFile
	packHolds   int // keepPacksOpen calls not yet released, see packopen.go

	batchMu sync.Mutex // guards batch
	batch   *packBatch

	// peer is the project's store while keepProjectObjects holds it (peerHolds > 0):
	// made on first use (peerMade), its packs kept open until peerRelease.
	peerMu      sync.Mutex
	peer        *objectStore
	peerMade    bool
	peerHolds   int
	peerRelease func()

	synced func(paths []string) // called after syncLoose synced paths (tests)

	afterIdx func() error // called between the index and the pack rename (tests)
}

func newObjectStore(shadowDir string, st *filesystem.Storage) *objectStore {
	dir := filepath.Join(shadowDir, "objects")
	return &objectStore{dir: dir, st: st, loose: gitrepo.NewLooseObjects(dir)}
}

// hashObject returns the git object id of data as an object of type t.
func hashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(gitrepo.ObjectHeader(t, int64(len(data))))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

func (o *objectStore) loosePath(h plumbing.Hash) string { return o.loose.Path(h) }

func (o *objectStore) hasPacks() bool { return len(o.loadPacks()) > 0 }

// has reports whether the object h is in the store: in the open batch, a pack or
// a loose file.
func (o *objectStore) has(h plumbing.Hash) bool {
	if o.pending(h) {
		return true
	}
	if _, _, ok := o.inPacks(h); ok {
		return true
	}
	return o.loose.Has(h)
}

// write stores data as an object of type t unless it is already there, and returns
// its id.
func (o *objectStore) write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := hashObject(t, data)
	if o.has(h) {
		return h, nil
	}
	return h, o.store(h, t, data)
}

// store stores data, whose id is h, as an object of type t: into the open batch,
// or as a loose object when no batch is open.
func (o *objectStore) store(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	if ok, err := o.addToBatch(h, t, data); ok || err != nil {
		return err
	}
	_, err := o.writeLoose(h, t, data)
	return err
}

// writeLoose stores data, whose id is h, as a loose object of type t.
func (o *objectStore) writeLoose(h plumbing.Hash, t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	return h, o.loose.Write(h, t, data)
}

// syncLoose makes the loose objects written since its last call durable: each
// file, then each directory it was renamed into. Whatever names them (a ref, the
// stat cache) is written only after it returns, so a crash never leaves a name
// for an object whose bytes were still in the page cache.
func (o *objectStore) syncLoose() error {
	paths, err := o.loose.Sync()
	if err != nil {
		return err
	}
	if o.synced != nil && len(paths) > 0 {
		o.synced(paths)
	}
	return nil
}

func (o *objectStore) ensureDir(dir string) error { return o.loose.EnsureDir(dir) }

// read returns the type and content of object h, read whole: for trees, commits
// and symlink targets. File contents go through open and are streamed.
func (o *objectStore) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, size, rc, err := o.open(h)
	if err != nil {
		return 0, nil, err
	}
	defer rc.Close()
	if size > maxWholeObject {
		return 0, nil, fmt.Errorf("object %s in %s is %d bytes, too large for a %s; the shadow repository is damaged", h, o.dir, size, t)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(rc, data); err != nil {
		return 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
	}
	return t, data, nil
}

// maxWholeObject bounds the objects read whole into memory (trees, commits, symlink
// targets): anything larger is damage, never a reason to allocate gigabytes.
const maxWholeObject = 256 << 20

// open returns the type, size and a reader of the content of object h, without
// reading it into memory when it is a loose object.
func (o *objectStore) open(h plumbing.Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	if t, size, rc, ok, err := o.openPacked(h); ok || err != nil {
		return t, size, rc, err
	}
	// A loose object of the shadow, a directory proved by CheckShadowDir: opened
	// without following a link or waiting on a FIFO planted in its place.
	f, err := runfile.OpenNoFollow(o.loosePath(h), looseObject)
	if err == nil {
		r, err := objfile.NewReader(f)
		if err != nil {
			f.Close()
			return 0, 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
		}
		t, size, err := r.Header()
		if err != nil {
			r.Close()
			f.Close()
			return 0, 0, nil, fmt.Errorf("object %s in %s is damaged: %w", h, o.dir, err)
		}
		return t, size, &looseReader{Reader: r, f: f}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	if t, size, rc, ok, err := o.openPending(h); ok || err != nil {
		return t, size, rc, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, err := o.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("object %s is missing from the repository %s: %w", h, filepath.Dir(o.dir), err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return 0, 0, nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	return obj.Type(), obj.Size(), rd, nil
}

// looseObject is how a loose object file is opened: a regular file, no link.
var looseObject = runfile.Kind{What: "loose object", Max: 1<<63 - 1}

// looseReader closes both the zlib stream and the file of a loose object.
type looseReader struct {
	*objfile.Reader
	f io.Closer
}

func (r *looseReader) Close() error {
	err := r.Reader.Close()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// bufPool holds the buffers of streamed copies.
var bufPool = sync.Pool{New: func() any { b := make([]byte, streamBuf); return &b }}

// streamBuf is the size of one read or write of a streamed file; a file or object
// up to smallObject bytes is handled whole, anything larger in streamBuf chunks, so
// the memory a snapshot or restore needs does not grow with the size of a file.
const (
	streamBuf   = 64 << 10
	smallObject = 256 << 10
)

// writeStream stores the size bytes read from r as an object of type t, hashing and
// compressing in one pass into a temporary file that is renamed to the object's
// name (or dropped when the object is there already). It fails when r holds fewer
// or more than size bytes (a file that changed while being read).
func (o *objectStore) writeStream(t plumbing.ObjectType, size int64, r io.Reader) (plumbing.Hash, error) {
	tmp, err := o.loose.TempFile()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := o.compressTo(tmp, t, size, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && o.has(h) {
		//replay:door the temp object file this process created
		os.Remove(tmp.Name())
		return h, nil
	}
	if err == nil {
		err = o.loose.Adopt(tmp.Name(), h)
	}
	if err != nil {
		//replay:door the temp object file this process created
		os.Remove(tmp.Name())
		return h, fmt.Errorf("writing an object into %s: %w", o.dir, err)
	}
	return h, nil
}

// compressTo writes the zlib-compressed object (header and content) to w and
// returns its id, reading r in streamBuf chunks.
func (o *objectStore) compressTo(w io.Writer, t plumbing.ObjectType, size int64, r io.Reader) (plumbing.Hash, error) {
	bufp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bufp)
	bw := bufio.NewWriterSize(w, streamBuf)
	zw := gitrepo.ZlibWriter(bw)
	defer gitrepo.PutZlibWriter(zw)
	sum := sha1.New()
	header := gitrepo.ObjectHeader(t, size)
	sum.Write(header)
	if _, err := zw.Write(header); err != nil {
		return plumbing.ZeroHash, err
	}
	n, err := io.CopyBuffer(io.MultiWriter(sum, zw), io.LimitReader(r, size), *bufp)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, fmt.Errorf("read %d bytes of %d: the file changed while it was read; retry", n, size)
	}
	if extra, _ := r.Read((*bufp)[:1]); extra > 0 {
		return plumbing.ZeroHash, fmt.Errorf("more than %d bytes: the file changed while it was read; retry", size)
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := bw.Flush(); err != nil {
		return plumbing.ZeroHash, err
	}
	var out plumbing.Hash
	copy(out[:], sum.Sum(nil))
	return out, nil
}

// hashStream returns the id of the size bytes read from r as an object of type t,
// reading in streamBuf chunks and storing nothing.
func hashStream(t plumbing.ObjectType, size int64, r io.Reader) (plumbing.Hash, error) {
	bufp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bufp)
	sum := sha1.New()
	sum.Write(gitrepo.ObjectHeader(t, size))
	n, err := io.CopyBuffer(sum, io.LimitReader(r, size), *bufp)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, fmt.Errorf("read %d bytes of %d: the file changed while it was read; retry", n, size)
	}
	var out plumbing.Hash
	copy(out[:], sum.Sum(nil))
	return out, nil
}

// copyObject copies object h from src into o, streaming, unless o has it already.
func (o *objectStore) copyObject(src *objectStore, h plumbing.Hash) error {
	if o.has(h) {
		return nil
	}
	t, size, rc, err := src.open(h)
	if err != nil {
		return err
	}
	defer rc.Close()
	got, err := o.writeStream(t, size, rc)
	if err != nil {
		return fmt.Errorf("copying object %s from %s: %w", h, src.dir, err)
	}
	if got != h {
		return fmt.Errorf("copying object %s from %s: its content hashes to %s; that repository is damaged", h, src.dir, got)
	}
	return nil
}
