package checkpoint

import (
	"runtime"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// treeWrites stores the trees a build encodes on goroutines of their own: the
// build hashes a tree, takes its id, and goes on with the next directory while the
// tree is compressed into the pack (the compression being most of a new tree's
// cost). The order of the objects in the pack does not matter.
type treeWrites struct {
	o    *objectStore
	jobs chan treeJob
	free chan []byte // encoding buffers given back
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

type treeJob struct {
	h   plumbing.Hash
	buf []byte
}

func (o *objectStore) startTreeWrites() *treeWrites {
	w := &treeWrites{o: o, jobs: make(chan treeJob, 64), free: make(chan []byte, 64)}
	for range min(4, runtime.GOMAXPROCS(0)) {
		w.wg.Add(1)
		go w.run()
	}
	return w
}

// write returns the id of the tree encoded in buf and stores the tree unless the
// store has it; buf belongs to w from then on.
func (w *treeWrites) write(buf []byte) plumbing.Hash {
	h := hashObject(plumbing.TreeObject, buf)
	if w.o.has(h) {
		w.giveBack(buf)
		return h
	}
	w.jobs <- treeJob{h, buf}
	return h
}

func (w *treeWrites) run() {
	defer w.wg.Done()
	for j := range w.jobs {
		if err := w.o.store(j.h, plumbing.TreeObject, j.buf); err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
		w.giveBack(j.buf)
	}
}

func (w *treeWrites) giveBack(buf []byte) {
	select {
	case w.free <- buf[:0]:
	default:
	}
}

// buffer returns an encoding buffer given back, or nil.
func (w *treeWrites) buffer() []byte {
	select {
	case b := <-w.free:
		return b
	default:
		return nil
	}
}

// wait returns when every tree written is stored, with the first error.
func (w *treeWrites) wait() error {
	close(w.jobs)
	w.wg.Wait()
	return w.err
}
