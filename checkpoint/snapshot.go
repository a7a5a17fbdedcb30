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
	size  int64
	mtime int64 // Unix nanoseconds
	hash  plumbing.Hash
	mode  filemode.FileMode // after hash: no padding between them (96 bytes, not 104)
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

// buildSnapshotTree writes the trees of a snapshot's files and returns the root.
// The walk lists them in path order: then the files are read in place, without a
// copy of the list. A list with reuse was found in path order by takeSnapshot
// already; any other is checked here.
func (s *Store) buildSnapshotTree(list []*fileState, reuse *treeReuse) (plumbing.Hash, error) {
	at := func(i int) treeFile { f := list[i]; return treeFile{Path: f.rel, Mode: f.mode, Hash: f.hash} }
	if reuse != nil || sortedByPath(len(list), func(i int) string { return list[i].rel }) {
		return s.objects.buildSortedTree(len(list), at, reuse)
	}
	files := make([]treeFile, len(list))
	for i := range list {
		files[i] = at(i)
	}
	return s.objects.buildTree(files)
}

// ioWorkers bounds the goroutines doing file IO at once.
func ioWorkers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// takeSnapshot walks the working tree, hashes what changed since the cached state
// into the shadow object store, writes the trees and, when save is set, saves the cache.
func (s *Store) takeSnapshot(save bool) (*snapshot, error) {
	start := time.Now().UnixNano()
	snap, err := s.walkList()
	if err != nil {
		return nil, err
	}
	var (
		m  *cacheMerge
		ok bool
	)
	// The merge with the cache file needs the list in path order, as walked: a
	// reuse below means the list was found so.
	if list := snap.sorted; sortedByPath(len(list), func(i int) string { return list[i].rel }) {
		m, ok = s.mergeCache(snap.sorted)
	}
	if !ok {
		todo, records := s.uncached(snap)
		return snap, s.storeSnapshot(snap, todo, records, start, save, nil)
	}
	reuse := &treeReuse{}
	if m.valid {
		reuse.prev, reuse.valid = m.key, true
		if reuse.cache = s.loadTreeCache(m.key); reuse.cache != nil {
			reuse.dirty = dirtyDirs(m.todo, m.gone)
		}
	}
	return snap, s.storeSnapshot(snap, m.todo, m.records, start, save, reuse)
}

// finishSnapshot hashes and stores the walked files and writes the trees; start is
// when the walk began (Unix nanoseconds).
func (s *Store) finishSnapshot(snap *snapshot, start int64, save bool) error {
	todo, records := s.uncached(snap)
	return s.storeSnapshot(snap, todo, records, start, save, nil)
}

// uncached fills in the hash of every file of snap whose stat data its cache holds
// and returns the files left to hash and how many records the cache has.
func (s *Store) uncached(snap *snapshot) ([]*fileState, int) {
	cache := s.cacheFor(snap)
	var todo []*fileState
	for _, f := range snap.sorted {
		if h, ok := cache.lookup(f.rel, f.mode, f.size, f.mtime); ok {
			f.hash = h
			continue
		}
		todo = append(todo, f)
	}
	return todo, len(cache.recs)
}

// storeSnapshot hashes and stores the files of snap in todo (the others have their
// hash from the cache, which holds records records), writes the trees and, when save
// is set, completes the pack and saves the cache; start is when the walk began.
// reuse, when not nil, holds the trees that need no building, and collects the tree
// cache saved beside the stat cache; it is set only for a list takeSnapshot found
// in path order.
//
// The stat cache is written while the trees are built and the pack completed, and
// renamed into place only once the pack is durable.
func (s *Store) storeSnapshot(snap *snapshot, todo []*fileState, records int, start int64, save bool, reuse *treeReuse) error {
	list := snap.sorted
	if err := s.hashFiles(len(list), todo); err != nil {
		return err
	}
	var cache *cacheSave
	if save && (len(todo) > 0 || len(list) != records) {
		cache = s.startCacheSave(start, list)
	}
	err := s.writeSnapshotTree(snap, reuse, save)
	if cache == nil {
		if err != nil || !save {
			return err
		}
		// Every file was found in the cache, not racy, and no record is left
		// over: the cache on disk already says what a new one would.
		if reuse != nil && reuse.valid && reuse.cache == nil {
			return s.saveTreeCache(reuse.prev, reuse.built)
		}
		return nil
	}
	key, err := cache.finish(err)
	if err != nil || reuse == nil {
		return err
	}
	return s.saveTreeCache(key, reuse.built)
}

// writeSnapshotTree writes the trees of snap and, when save is set, completes the
// pack: its objects are durable when it returns nil.
func (s *Store) writeSnapshotTree(snap *snapshot, reuse *treeReuse, save bool) error {
	var err error
	if snap.tree, err = s.buildSnapshotTree(snap.sorted, reuse); err != nil {
		return err
	}
	if !save {
		return nil
	}
	return s.objects.finishPack()
}

// hashFiles reads the files of todo, of a snapshot of total files, sets their hash
// and writes their blobs, in parallel.
func (s *Store) hashFiles(total int, todo []*fileState) error {
	count := s.countFiles("hashing", total)
	count.add(total - len(todo))
	return parallel(len(todo), func(i int) error {
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
	//replay:door the snapshot reads project files the walk listed as regular: O_NOFOLLOW|O_NONBLOCK, streamed into hashed blobs
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
