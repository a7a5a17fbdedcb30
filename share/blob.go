package share

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/store"
)

// pushWorkers bounds concurrent uploads; with the reader's own buffer, at most
// pushWorkers+2 chunks are in memory at once, whatever the run's size.
const pushWorkers = 4

// uploader puts chunks into a store a few at a time, from a fixed set of
// ChunkSize buffers, skipping the objects the store is known to hold.
type uploader struct {
	ctx    context.Context
	cancel context.CancelFunc
	b      store.Backend
	known  map[string]bool // objects the store's current index names
	bufs   chan []byte
	jobs   chan upload
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	queued sync.Map // hashes already sent, so one object is uploaded once
	// New and NewBytes count the objects uploaded.
	New      atomic.Int64
	NewBytes atomic.Int64
}

type upload struct {
	hash string
	buf  []byte
	data []byte
}

func newUploader(ctx context.Context, b store.Backend, known map[string]bool) *uploader {
	u := &uploader{b: b, known: known, bufs: make(chan []byte, pushWorkers+2), jobs: make(chan upload)}
	u.ctx, u.cancel = context.WithCancel(ctx)
	for range pushWorkers + 2 {
		u.bufs <- nil // allocated on first use
	}
	for range pushWorkers {
		u.wg.Add(1)
		go u.work()
	}
	return u
}

func (u *uploader) work() {
	defer u.wg.Done()
	for j := range u.jobs {
		if err := u.put(j); err != nil {
			u.fail(err)
		}
		u.bufs <- j.buf
	}
}

func (u *uploader) put(j upload) error {
	if err := u.ctx.Err(); err != nil {
		return err
	}
	key := BlobKey(j.hash)
	ok, err := u.b.Has(u.ctx, key)
	if err != nil || ok {
		return err
	}
	if err := u.b.Put(u.ctx, key, j.data); err != nil {
		return err
	}
	u.New.Add(1)
	u.NewBytes.Add(int64(len(j.data)))
	return nil
}

func (u *uploader) fail(err error) {
	u.mu.Lock()
	if u.err == nil {
		u.err = err
		u.cancel()
	}
	u.mu.Unlock()
}

// buffer returns a free chunk buffer, waiting for one.
func (u *uploader) buffer() ([]byte, error) {
	select {
	case buf := <-u.bufs:
		if buf == nil {
			buf = make([]byte, ChunkSize)
		}
		return buf, nil
	case <-u.ctx.Done():
		return nil, u.wait()
	}
}

// send queues one object (data lives in buf, which the uploader takes back).
func (u *uploader) send(hash string, buf, data []byte) error {
	if _, dup := u.queued.LoadOrStore(hash, true); dup || u.known[hash] {
		u.bufs <- buf
		return nil
	}
	select {
	case u.jobs <- upload{hash: hash, buf: buf, data: data}:
		return nil
	case <-u.ctx.Done():
		u.bufs <- buf
		return u.wait()
	}
}

// wait returns the first error, or the context's.
func (u *uploader) wait() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return u.err
	}
	return u.ctx.Err()
}

// close waits for the uploads in flight and returns the first error.
func (u *uploader) close() error {
	close(u.jobs)
	u.wg.Wait()
	u.cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// putBlob reads r (size bytes) in chunks and queues each: the returned Blob
// names one object, or the chunks of a larger one.
func (u *uploader) putBlob(r io.Reader, size int64, what string) (Blob, error) {
	whole := sha256.New()
	blob := Blob{}
	var read int64
	for {
		buf, err := u.buffer()
		if err != nil {
			return Blob{}, err
		}
		n, err := io.ReadFull(r, buf)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil
		}
		if err != nil {
			u.bufs <- buf
			return Blob{}, fmt.Errorf("%s: %w", what, err)
		}
		read += int64(n)
		if read > size {
			u.bufs <- buf
			return Blob{}, fmt.Errorf("%s grew while it was pushed: push again when it is quiet", what)
		}
		if n < ChunkSize && len(blob.Chunks) == 0 {
			// The only chunk: its hash is the whole's, hashed once.
			sum := sha256.Sum256(buf[:n])
			h := hex.EncodeToString(sum[:])
			blob.SHA256, blob.Size = h, read
			if read != size {
				u.bufs <- buf
				return Blob{}, fmt.Errorf("%s shrank while it was pushed: push again when it is quiet", what)
			}
			return blob, u.send(h, buf, buf[:n])
		}
		h := hashBoth(whole, buf[:n])
		if n > 0 {
			blob.Chunks = append(blob.Chunks, h)
			if err := u.send(h, buf, buf[:n]); err != nil {
				return Blob{}, err
			}
		} else {
			u.bufs <- buf
		}
		if n < ChunkSize {
			break
		}
	}
	if read != size {
		return Blob{}, fmt.Errorf("%s shrank while it was pushed: push again when it is quiet", what)
	}
	blob.Size = read
	blob.SHA256 = hex.EncodeToString(whole.Sum(nil))
	if len(blob.Chunks) == 1 { // exactly ChunkSize bytes: one object
		blob.Chunks = nil
	}
	return blob, nil
}

// chunkBufs holds the chunk buffers of getBlob.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

// blobObjects lists the object hashes a blob is made of.
func blobObjects(b Blob) []string {
	if len(b.Chunks) == 0 {
		return []string{b.SHA256}
	}
	return b.Chunks
}

// getBlob writes blob's content to w, each chunk read (at most its expected
// size) and checked against its hash before it is written. A mismatch is
// store.ErrCorrupt naming the object. The chunk hashes come from the index,
// so the checked chunks are the content: the whole's sha256 is not hashed a
// second time (it was half a pull's CPU, bench/share.sh). The next chunk is
// fetched and checked while one is written (two chunk buffers from a pool),
// so hashing overlaps the disk; a pull holds a few chunks whatever the run's
// size.
func getBlob(ctx context.Context, b store.Backend, blob Blob, w io.Writer, run string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objs := blobObjects(blob)
	type piece struct {
		buf  *[]byte
		data []byte
		err  error
	}
	pieces := make(chan piece, 1)
	free := make(chan *[]byte, 2)
	for range min(2, len(objs)) {
		free <- chunkBufs.Get().(*[]byte)
	}
	go func() {
		defer close(pieces)
		left := blob.Size
		for _, h := range objs {
			var bp *[]byte
			select {
			case bp = <-free:
			case <-ctx.Done():
				return
			}
			want := min(left, ChunkSize)
			data, err := getChunk(ctx, b, h, want, *bp, run)
			pieces <- piece{buf: bp, data: data, err: err}
			if err != nil {
				return
			}
			left -= want
		}
		if left != 0 {
			pieces <- piece{err: errkind.Errorf(store.ErrCorrupt, "store %s: run %s: the chunks of %s are shorter than its %d bytes (corrupt): push the run again; nothing was written", b, run, blob.SHA256, blob.Size)}
		}
	}()
	var err error
	for p := range pieces {
		if err == nil && p.err != nil {
			err = p.err
		}
		if err == nil {
			if _, werr := w.Write(p.data); werr != nil {
				err = werr
			}
		}
		if err != nil {
			cancel() // the fetcher stops; the loop drains what it sent
		}
		if p.buf != nil {
			free <- p.buf // never blocks: at most two buffers go round
		}
	}
	for len(free) > 0 {
		chunkBufs.Put(<-free)
	}
	return err
}

// getChunk reads object h (want bytes) into buf and checks its hash and size.
func getChunk(ctx context.Context, b store.Backend, h string, want int64, buf []byte, run string) ([]byte, error) {
	key := BlobKey(h)
	data, err := store.GetInto(ctx, b, key, want, buf)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errkind.Errorf(store.ErrNotFound, "store %s: run %s: object %s is missing: push the run again from its machine", b, run, key)
	}
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != h || int64(len(data)) != want {
		return nil, errkind.Errorf(store.ErrCorrupt, "store %s: run %s: object %s does not match its sha256 or size (corrupt): delete it and push the run again; nothing was written", b, run, key)
	}
	return data, nil
}

// hashBothMin is the smallest chunk whose two hashes are worth a goroutine.
const hashBothMin = 256 << 10

// hashBoth adds data to whole and returns data's own sha256 in hex, the two
// hashes computed at once on two cores: they were the most of a push's CPU
// (bench/share.sh, perf: 42% of the cycles in SHA-256).
func hashBoth(whole hash.Hash, data []byte) string {
	if len(data) < hashBothMin {
		whole.Write(data)
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
	done := make(chan struct{})
	go func() {
		whole.Write(data)
		close(done)
	}()
	sum := sha256.Sum256(data)
	<-done
	return hex.EncodeToString(sum[:])
}
