package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// modeUnknown is the type of a listed name whose type the listing did not give.
const modeUnknown = fs.ModeIrregular

// dirEntry is one name of a listed directory.
type dirEntry struct {
	path string // slash-separated from the project root
	name string // the last element of path
	key  string // what it sorts by: name, followed by "/" for a directory
	kind fs.FileMode
}

// sortKey is the key of a directory entry named name of type kind.
func sortKey(name string, kind fs.FileMode) string {
	if kind&fs.ModeDir != 0 {
		return name + "/"
	}
	return name
}

type walkJob struct {
	rel   string
	rules *ignoreRules
}

// walkedDir is one directory the walk listed: its files and subdirectories, each
// in path order, and for each subdirectory how many of the files come before it.
type walkedDir struct {
	files   []fileState
	subdirs []walkJob
	before  []int
}

// walk lists the working tree in parallel, honouring ignore rules and never
// entering .git, ignored directories or the shadow repository.
func (s *Store) walk() (*snapshot, error) {
	snap, err := s.walkList()
	if err != nil {
		return nil, err
	}
	snap.files = make(map[string]*fileState, len(snap.sorted))
	for _, f := range snap.sorted {
		snap.files[f.rel] = f
	}
	return snap, nil
}

// walkList is walk without the map of files by path (snap.files is nil), for a
// snapshot that only hashes the files and builds the tree.
func (s *Store) walkList() (*snapshot, error) {
	base, err := s.baseRules()
	if err != nil {
		return nil, err
	}
	snap := &snapshot{dirs: map[string]bool{}}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		listed   = map[string]walkedDir{}
		// A worker takes a lister to read a directory: as many as ioWorkers.
		listers = make(chan *dirLister, ioWorkers())
	)
	for range cap(listers) {
		listers <- newDirLister()
	}
	var visit func(job walkJob)
	visit = func(job walkJob) {
		defer wg.Done()
		l := <-listers
		d, ignored, err := s.readDir(l, job)
		listers <- l
		mu.Lock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		listed[job.rel] = d
		snap.ignored = append(snap.ignored, ignored...)
		for _, sub := range d.subdirs {
			snap.dirs[sub.rel] = true
		}
		mu.Unlock()
		for _, sub := range d.subdirs {
			wg.Add(1)
			go visit(sub)
		}
	}
	wg.Add(1)
	visit(walkJob{rel: "", rules: base})
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Strings(snap.ignored)
	n := 0
	for _, d := range listed {
		n += len(d.files)
	}
	snap.sorted = inPathOrder(listed, "", make([]*fileState, 0, n))
	return snap, nil
}

// inPathOrder appends the files of directory dir and of every directory under it
// to out in path order: readDir sorted each directory's entries by sortKey (the
// byte order of full paths),
// so no comparison ever covers the long prefix full paths share.
func inPathOrder(listed map[string]walkedDir, dir string, out []*fileState) []*fileState {
	d := listed[dir]
	next := 0
	for i, sub := range d.subdirs {
		for ; next < d.before[i]; next++ {
			out = append(out, &d.files[next])
		}
		out = inPathOrder(listed, sub.rel, out)
	}
	for ; next < len(d.files); next++ {
		out = append(out, &d.files[next])
	}
	return out
}

// readDir lists one directory with l: its files, in name order, with their lstat
// data; its subdirectories to walk; and the ignored paths under it.
func (s *Store) readDir(l *dirLister, job walkJob) (walkedDir, []string, error) {
	abs := filepath.Join(s.projectDir, filepath.FromSlash(job.rel))
	var domain []string
	prefix := ""
	if job.rel != "" {
		domain = strings.Split(job.rel, "/")
		prefix = job.rel + "/"
	}
	dir, ents, err := l.list(abs, prefix)
	if err != nil {
		return walkedDir{}, nil, err
	}
	defer dir.close()
	rules := job.rules
	for i := range ents {
		e := &ents[i]
		if e.kind == modeUnknown {
			st, err := statAt(dir.fd, abs, e.name)
			if err != nil && !os.IsNotExist(err) {
				return walkedDir{}, nil, err
			}
			e.kind, e.key = st.kind, sortKey(e.name, st.kind)
		}
		if e.name == ".gitignore" && e.kind&fs.ModeDir == 0 {
			// Read only where there is one: most directories have none.
			if rules, err = rules.with(filepath.Join(abs, ".gitignore"), domain); err != nil {
				return walkedDir{}, nil, err
			}
		}
	}
	// Sorted as git sorts a tree's entries, a directory as its name and "/".
	slices.SortFunc(ents, func(a, b dirEntry) int { return strings.Compare(a.key, b.key) })
	return s.statEntries(dir, abs, domain, rules, ents)
}

// statEntries keeps the entries of one listed directory that are not ignored and
// lstats its files.
func (s *Store) statEntries(dir dirHandle, abs string, domain []string, rules *ignoreRules, ents []dirEntry) (walkedDir, []string, error) {
	var (
		d       walkedDir
		ignored []string
		ignore  = rules.forDir(domain)
	)
	for _, e := range ents {
		if e.name == ".git" {
			continue
		}
		isDir := e.kind&fs.ModeDir != 0
		if isDir && filepath.Join(abs, e.name) == s.shadowDir {
			ignored = append(ignored, e.path+"/")
			continue
		}
		if ignore.match(e.name, isDir) {
			if isDir {
				ignored = append(ignored, e.path+"/")
			} else {
				ignored = append(ignored, e.path)
			}
			continue
		}
		if isDir {
			d.subdirs = append(d.subdirs, walkJob{rel: e.path, rules: rules})
			d.before = append(d.before, len(d.files))
			continue
		}
		if e.kind&^fs.ModeSymlink != 0 {
			continue // sockets, pipes and devices are not snapshotted, like git
		}
		st, err := statAt(dir.fd, abs, e.name)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return walkedDir{}, nil, err
		}
		if st.kind&^fs.ModeSymlink != 0 {
			continue // replaced since the listing by a directory or a special file
		}
		if d.files == nil {
			d.files = make([]fileState, 0, len(ents)) // one allocation, never grown
		}
		d.files = append(d.files, fileState{rel: e.path, mode: walkedMode(st), size: st.size, mtime: st.mtime, extra: st.extra})
	}
	return d, ignored, nil
}

// walkedMode is the tree mode of a directory entry whose lstat is st.
func walkedMode(st entryStat) filemode.FileMode {
	switch {
	case st.kind&fs.ModeSymlink != 0:
		return filemode.Symlink
	case st.exec:
		return filemode.Executable
	}
	return filemode.Regular
}
