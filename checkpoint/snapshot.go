package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// fileState is one file, executable or symlink of the working tree as a snapshot saw it.
type fileState struct {
	rel   string // slash-separated, from the project root
	mode  filemode.FileMode
	size  int64
	mtime int64 // Unix nanoseconds
	hash  plumbing.Hash
	extra statExtra
}

// entryStat is what a snapshot keeps of a directory entry's lstat.
type entryStat struct {
	kind        fs.FileMode // the type bits
	size, mtime int64
	exec        bool
	extra       statExtra
}

// snapshot is the state of the working tree at one moment: its non-ignored files,
// the ignored paths the walk did not enter, and the tree hash.
type snapshot struct {
	tree    plumbing.Hash
	files   map[string]*fileState
	sorted  []*fileState // the same files in path order, as the walk listed them
	ignored []string     // slash-separated; directories end with "/"
	dirs    map[string]bool
	cache   *statCache // the stat cache, once loaded for this snapshot
}

// cacheFor returns snap's stat cache, loading it on first use.
func (s *Store) cacheFor(snap *snapshot) *statCache {
	if snap.cache == nil {
		snap.cache = s.loadCache()
	}
	return snap.cache
}

// ioWorkers bounds the goroutines doing file IO at once.
func ioWorkers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// takeSnapshot walks the working tree, hashes what changed since the cached state
// into the shadow object store, writes the trees and, when save is set, saves the cache.
func (s *Store) takeSnapshot(save bool) (*snapshot, error) {
	start := time.Now().UnixNano()
	// The cache is read and decoded while the tree is walked.
	cache := make(chan *statCache, 1)
	go func() { cache <- s.loadCache() }()
	snap, err := s.walkList()
	c := <-cache
	if err != nil {
		return nil, err
	}
	snap.cache = c
	return snap, s.finishSnapshot(snap, start, save)
}

// finishSnapshot hashes and stores the walked files and writes the trees; start is
// when the walk began (Unix nanoseconds).
func (s *Store) finishSnapshot(snap *snapshot, start int64, save bool) error {
	var err error
	list := snap.sorted
	cached, err := s.hashFiles(list, s.cacheFor(snap))
	if err != nil {
		return err
	}
	files := make([]treeFile, len(list))
	for i, f := range list {
		files[i] = treeFile{Path: f.rel, Mode: f.mode, Hash: f.hash}
	}
	if snap.tree, err = s.objects.buildTree(files); err != nil {
		return err
	}
	if save {
		if err := s.objects.finishPack(); err != nil {
			return err
		}
		if cached == len(list) && cached == len(snap.cache.recs) {
			// Every file was found in the cache, not racy, and no record is left
			// over: the cache on disk already says what a new one would.
			return nil
		}
		return s.saveCache(start, list)
	}
	return nil
}

// hashFiles fills in the hash of every file, from the cache when its stat data is
// unchanged, otherwise by reading it and writing the blob, in parallel. It returns
// how many came from the cache.
func (s *Store) hashFiles(list []*fileState, cache *statCache) (int, error) {
	var todo []*fileState
	for _, f := range list {
		if h, ok := cache.lookup(f.rel, f.mode, f.size, f.mtime); ok {
			f.hash = h
			continue
		}
		todo = append(todo, f)
	}
	count := s.countFiles("hashing", len(list))
	count.add(len(list) - len(todo))
	return len(list) - len(todo), parallel(len(todo), func(i int) error {
		err := s.hashFile(todo[i])
		count.add(1)
		return err
	})
}

func (s *Store) hashFile(f *fileState) error { return s.readAndHash(f, true) }

// readAndHash reads a file or symlink and sets its hash, storing the blob when store
// is set. A file larger than smallObject is streamed: hashed (and compressed) while
// it is read, never held in memory whole.
func (s *Store) readAndHash(f *fileState, store bool) error {
	abs := filepath.Join(s.projectDir, filepath.FromSlash(f.rel))
	if f.mode == filemode.Symlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return fmt.Errorf("%s: cannot read the symlink: %w", abs, err)
		}
		return s.storeData(f, []byte(target), store)
	}
	file, err := os.OpenFile(abs, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return fmt.Errorf("%s: cannot read the file: %w", abs, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return fmt.Errorf("%s: cannot read the file: %w", abs, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: is no longer a regular file (it changed while the snapshot was taken); retry", abs)
	}
	size := info.Size()
	if size <= smallObject {
		data := make([]byte, size)
		if _, err := io.ReadFull(file, data); err != nil {
			return fmt.Errorf("%s: cannot read the file (did it change while the snapshot was taken? retry): %w", abs, err)
		}
		return s.storeData(f, data, store)
	}
	// Hash first: compressing costs far more than reading again, and the blob is
	// often stored already (a file touched but unchanged, a restore's verification).
	if f.hash, err = hashStream(plumbing.BlobObject, size, file); err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	if !store || s.objects.has(f.hash) {
		return nil
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	h, err := s.objects.writeStream(plumbing.BlobObject, size, file)
	if err == nil && h != f.hash {
		err = errors.New("the file changed while it was read; retry")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	return nil
}

// storeData sets f's hash from data held in memory, storing the blob when store is set.
func (s *Store) storeData(f *fileState, data []byte, store bool) error {
	if !store {
		f.hash = hashObject(plumbing.BlobObject, data)
		return nil
	}
	h, err := s.objects.write(plumbing.BlobObject, data)
	if err != nil {
		return err
	}
	f.hash = h
	return nil
}

// parallel runs fn(0..n-1) on ioWorkers goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	if n == 0 {
		return nil
	}
	workers := min(ioWorkers(), n)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int, workers)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}
