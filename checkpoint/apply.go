package checkpoint

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/replaytool/replay/internal/gitrepo"
)

// restorePlan is what a restore will do to the working tree.
type restorePlan struct {
	write     []treeFile // files and symlinks to (re)create
	chmod     []treeFile // same content, other executable bit
	remove    []string   // non-ignored files absent from the checkpoint
	kept      []treeFile // checkpoint entries left as they are outside the walk: submodule links, ignored files with the same content
	cleanDirs []string   // directories that may be left empty, deepest first
	unchanged int
	written   []fileState // filled in by applyPlan: what was written for each of write
}

// planRestore compares the working tree with the checkpoint and refuses, before
// anything is written, whatever would overwrite or delete an ignored file.
func (s *Store) planRestore(cur *snapshot, target map[string]treeFile, cp Checkpoint) (*restorePlan, error) {
	ignoredDirs, ignoredFiles := map[string]bool{}, map[string]bool{}
	for _, ig := range cur.ignored {
		if d, ok := strings.CutSuffix(ig, "/"); ok {
			ignoredDirs[d] = true
		} else {
			ignoredFiles[ig] = true
		}
	}
	plan := &restorePlan{}
	targetDirs, err := s.planWrites(plan, cur, target, cp, ignoredDirs, ignoredFiles)
	if err != nil {
		return nil, err
	}
	for d := range cur.dirs {
		if _, isFile := target[d]; !isFile {
			continue
		}
		for _, ignored := range []map[string]bool{ignoredDirs, ignoredFiles} {
			for ig := range ignored {
				if strings.HasPrefix(ig, d+"/") {
					return nil, fmt.Errorf("cannot restore %s: checkpoint %s has a file there but the directory holds ignored %s; move it away and retry (nothing was written)", d, cp.Short, ig)
				}
			}
		}
	}
	planRemovals(plan, cur, target, targetDirs)
	return plan, nil
}

// planWrites sorts every file of the target into unchanged, chmod or write, and
// returns the directories the target has.
func (s *Store) planWrites(plan *restorePlan, cur *snapshot, target map[string]treeFile, cp Checkpoint, ignoredDirs, ignoredFiles map[string]bool) (map[string]bool, error) {
	targetDirs := map[string]bool{}
	for p, t := range target {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if targetDirs[d] {
				break
			}
			targetDirs[d] = true
		}
		if t.Mode == filemode.Submodule {
			plan.unchanged++ // submodule links are left to the submodule's own repository
			plan.kept = append(plan.kept, t)
			continue
		}
		if err := s.checkIgnoredCollision(p, t, cp, ignoredDirs, ignoredFiles); err != nil {
			if errors.Is(err, errSame) {
				plan.unchanged++
				plan.kept = append(plan.kept, t)
				continue
			}
			return nil, err
		}
		f, ok := cur.files[p]
		switch {
		case ok && f.hash == t.Hash && f.mode == t.Mode:
			plan.unchanged++
		case ok && f.hash == t.Hash && f.mode != filemode.Symlink && t.Mode != filemode.Symlink:
			plan.chmod = append(plan.chmod, t)
		default:
			plan.write = append(plan.write, t)
		}
	}
	return targetDirs, nil
}

// planRemovals lists the files the target does not have and the directories left
// empty by their removal (or standing where the target has a file), deepest first.
func planRemovals(plan *restorePlan, cur *snapshot, target map[string]treeFile, targetDirs map[string]bool) {
	dirSet := map[string]bool{}
	for p := range cur.files {
		if _, keep := target[p]; keep {
			continue
		}
		plan.remove = append(plan.remove, p)
		for d := path.Dir(p); d != "." && !targetDirs[d] && !dirSet[d]; d = path.Dir(d) {
			dirSet[d] = true
		}
	}
	for d := range cur.dirs {
		if _, isFile := target[d]; isFile {
			dirSet[d] = true
		}
	}
	for d := range dirSet {
		plan.cleanDirs = append(plan.cleanDirs, d)
	}
	sort.Slice(plan.cleanDirs, func(i, j int) bool {
		a, b := plan.cleanDirs[i], plan.cleanDirs[j]
		if ca, cb := strings.Count(a, "/"), strings.Count(b, "/"); ca != cb {
			return ca > cb
		}
		return a < b
	})
	sort.Strings(plan.remove)
}

var errSame = errors.New("same content")

// checkIgnoredCollision refuses a checkpoint path that would overwrite an ignored
// file with other content or write through an ignored non-directory; errSame when
// the ignored file already has the checkpoint's content.
func (s *Store) checkIgnoredCollision(p string, t treeFile, cp Checkpoint, ignoredDirs, ignoredFiles map[string]bool) error {
	inIgnored := ignoredFiles[p]
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if ignoredFiles[d] {
			return fmt.Errorf("cannot restore %s: checkpoint %s needs a directory at %s, which is an ignored file now; move it away and retry (nothing was written)", p, cp.Short, d)
		}
		if ignoredDirs[d] {
			inIgnored = true
		}
	}
	if !inIgnored && !ignoredDirs[p] {
		return nil
	}
	abs := filepath.Join(s.projectDir, filepath.FromSlash(p))
	info, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	if !info.IsDir() {
		f := &fileState{rel: p, mode: modeOf(info)}
		if err := s.readAndHash(f, false); err != nil {
			return err
		}
		if f.hash == t.Hash && f.mode == t.Mode {
			return errSame
		}
	}
	return fmt.Errorf("cannot restore %s: it is ignored now and differs from checkpoint %s; move it away and retry (nothing was written)", p, cp.Short)
}

func modeOf(info fs.FileInfo) filemode.FileMode {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return filemode.Symlink
	case info.Mode()&0o100 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

// applyPlan removes, cleans and writes, in that order, with parallel file IO. It
// records in plan.written the state of every file it wrote: its stat data after the
// write and the hash of the bytes it wrote.
func (s *Store) applyPlan(plan *restorePlan, fault func(point, file string)) error {
	err := parallel(len(plan.remove), func(i int) error {
		abs := filepath.Join(s.projectDir, filepath.FromSlash(plan.remove[i]))
		//replay:door the restore engine: a path of the checkpoint tree, checked safe (no .., no .git) and under the project, after the safety checkpoint
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", abs, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range plan.cleanDirs {
		//replay:door the restore engine: an emptied directory of the project, rmdir only
		os.Remove(filepath.Join(s.projectDir, filepath.FromSlash(d))) // fails, as wanted, when not empty
	}
	dirs := &dirMaker{root: s.projectDir, made: map[string]bool{}}
	count := s.countFiles("writing", len(plan.write))
	plan.written = make([]fileState, len(plan.write))
	var faultMu sync.Mutex // the files are written in parallel; the hook is called one at a time
	err = parallel(len(plan.write), func(i int) error {
		var err error
		plan.written[i], err = s.writeEntry(plan.write[i], dirs)
		count.add(1)
		if err == nil {
			faultMu.Lock()
			fault(FaultFileWritten, filepath.Join(s.projectDir, filepath.FromSlash(plan.write[i].Path)))
			faultMu.Unlock()
		}
		return err
	})
	if err != nil {
		return err
	}
	return parallel(len(plan.chmod), func(i int) error {
		abs := filepath.Join(s.projectDir, filepath.FromSlash(plan.chmod[i].Path))
		info, err := os.Lstat(abs)
		if err != nil {
			return fmt.Errorf("%s: %w", abs, err)
		}
		return os.Chmod(abs, execPerm(info.Mode().Perm(), plan.chmod[i].Mode == filemode.Executable))
	})
}

func execPerm(perm fs.FileMode, exec bool) fs.FileMode {
	if exec {
		return perm | (perm&0o444)>>2 | 0o100
	}
	return perm &^ 0o111
}

// writeEntry creates one file or symlink, replacing whatever is at its path; it never
// follows a symlink: parents are real directories, and the file is either a regular
// file with no other link rewritten in place or the path created afresh. It returns
// the state of what it wrote, hashed from the bytes written.
func (s *Store) writeEntry(t treeFile, dirs *dirMaker) (fileState, error) {
	if err := dirs.ensure(path.Dir(t.Path)); err != nil {
		return fileState{}, err
	}
	abs := filepath.Join(s.projectDir, filepath.FromSlash(t.Path))
	var (
		src  io.ReadCloser
		size int64
	)
	if t.Mode != filemode.Symlink {
		// Opened before anything at abs is replaced: a missing object fails first.
		var err error
		if _, size, src, err = s.objects.open(t.Hash); err != nil {
			return fileState{}, err
		}
		defer src.Close()
	}
	perm := fs.FileMode(0o644)
	if t.Mode == filemode.Executable {
		perm = 0o755
	}
	if info, err := os.Lstat(abs); err == nil {
		if info.IsDir() {
			return fileState{}, fmt.Errorf("%s is a directory that is not empty; the checkpoint has a file there", abs)
		}
		if info.Mode().IsRegular() {
			perm = execPerm(info.Mode().Perm(), t.Mode == filemode.Executable)
			// Rewriting the file costs a fraction of an unlink and a create.
			if src != nil {
				if f := openInPlace(abs, info); f != nil {
					return fillFile(f, abs, perm, src, size, t)
				}
			}
		}
		//replay:door the restore engine: replaces a project file by the checkpoint's, after the safety checkpoint
		if err := os.Remove(abs); err != nil {
			return fileState{}, fmt.Errorf("replacing %s: %w", abs, err)
		}
	}
	if t.Mode == filemode.Symlink {
		return s.writeSymlink(abs, t)
	}
	//replay:door the restore engine: O_EXCL|O_NOFOLLOW create of a checked project path
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
	if err != nil {
		return fileState{}, fmt.Errorf("writing %s: %w", abs, err)
	}
	return fillFile(f, abs, perm, src, size, t)
}

// writeSymlink creates the symlink abs to the target blob t.Hash holds.
func (s *Store) writeSymlink(abs string, t treeFile) (fileState, error) {
	_, data, err := s.objects.read(t.Hash)
	if err != nil {
		return fileState{}, err
	}
	//replay:door the restore engine: a symlink the checkpoint tree records, recreated as git checkout does
	if err := os.Symlink(string(data), abs); err != nil {
		return fileState{}, fmt.Errorf("creating the symlink %s: %w", abs, err)
	}
	info, err := os.Lstat(abs)
	if err != nil {
		return fileState{}, fmt.Errorf("creating the symlink %s: %w", abs, err)
	}
	return fileState{rel: t.Path, mode: modeOf(info), size: info.Size(), mtime: info.ModTime().UnixNano(),
		extra: extraOf(info), hash: hashObject(plumbing.BlobObject, data)}, nil
}

// openInPlace opens the regular file abs, which info (its lstat) describes, for a
// rewrite in place: only when it is still that file and has no other link (a hard
// link elsewhere must keep its content, as git leaves it). Nil otherwise, and the
// caller replaces the path.
func openInPlace(abs string, info fs.FileInfo) *os.File {
	if !singleLink(info) {
		return nil
	}
	//replay:door the restore engine: O_NOFOLLOW|O_NONBLOCK open of a checked project path
	f, err := os.OpenFile(abs, os.O_WRONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil
	}
	now, err := f.Stat()
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(info, now) || !singleLink(now) {
		f.Close()
		return nil
	}
	return f
}

// fillFile writes the size bytes of blob t.Hash read from rc at the start of the
// file f (at abs), cuts it to that size, gives it the permissions perm and closes
// it. A file rewritten in place is not truncated to zero first: on ext4 (its
// auto_da_alloc) a file truncated to zero is flushed when it is closed, which cost
// a restore about 60 ms of CPU per 1,600 files. The bytes are hashed as they
// are written: a blob whose content is not t.Hash fails the write. It returns the
// file's state after the write.
func fillFile(f *os.File, abs string, perm fs.FileMode, rc io.Reader, size int64, t treeFile) (fileState, error) {
	st, err := fillAndStat(f, perm, rc, size, t)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileState{}, fmt.Errorf("writing %s: %w", abs, err)
	}
	return st, nil
}

func fillAndStat(f *os.File, perm fs.FileMode, rc io.Reader, size int64, t treeFile) (fileState, error) {
	sum := sha1.New()
	sum.Write(gitrepo.ObjectHeader(plumbing.BlobObject, size))
	bufp := bufPool.Get().(*[]byte)
	n, err := io.CopyBuffer(io.MultiWriter(f, sum), rc, *bufp)
	bufPool.Put(bufp)
	if err != nil {
		return fileState{}, err
	}
	if n != size {
		return fileState{}, fmt.Errorf("blob %s gave %d bytes of %d; the shadow repository is damaged", t.Hash, n, size)
	}
	st := fileState{rel: t.Path, size: n}
	copy(st.hash[:], sum.Sum(nil))
	if st.hash != t.Hash {
		return fileState{}, fmt.Errorf("blob %s holds content that hashes to %s; the shadow repository is damaged", t.Hash, st.hash)
	}
	info, err := f.Stat()
	if err == nil && info.Size() != n { // a longer file rewritten in place
		if err = f.Truncate(n); err == nil {
			info, err = f.Stat()
		}
	}
	if err == nil && info.Mode().Perm() != perm {
		// O_CREATE's mode is cut by the umask; a rewritten file keeps its own.
		if err = f.Chmod(perm); err == nil {
			info, err = f.Stat()
		}
	}
	if err != nil {
		return fileState{}, err
	}
	st.mode, st.size, st.mtime, st.extra = modeOf(info), info.Size(), info.ModTime().UnixNano(), extraOf(info)
	return st, nil
}

// dirMaker creates parent directories, replacing a symlink or file in the way so no
// write ever goes through a symlink.
type dirMaker struct {
	root string
	mu   sync.Mutex
	made map[string]bool
}

func (m *dirMaker) ensure(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	m.mu.Lock()
	done := m.made[rel]
	m.mu.Unlock()
	if done {
		return nil
	}
	if err := m.ensure(path.Dir(rel)); err != nil {
		return err
	}
	abs := filepath.Join(m.root, filepath.FromSlash(rel))
	info, err := os.Lstat(abs)
	switch {
	case err == nil && info.IsDir():
	case err == nil:
		//replay:door the restore engine: replaces a project file by the checkpoint's, after the safety checkpoint
		if err := os.Remove(abs); err != nil {
			return fmt.Errorf("replacing %s with a directory: %w", abs, err)
		}
		fallthrough
	case errors.Is(err, fs.ErrNotExist):
		//replay:door the restore engine: a directory of the checkpoint tree; mkdir never follows a link
		if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", abs, err)
		}
		if info, err := os.Lstat(abs); err != nil || !info.IsDir() {
			return fmt.Errorf("creating %s: something else appeared there", abs)
		}
	default:
		return fmt.Errorf("%s: %w", abs, err)
	}
	m.mu.Lock()
	m.made[rel] = true
	m.mu.Unlock()
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
