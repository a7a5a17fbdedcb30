package gitrepo

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 is found missing (a kernel before 5.6, a
// seccomp filter): every open then goes to the wrapped file system at once.
var noOpenat2 atomic.Bool

// openat2 opens path with no link followed on the way.
func openat2(path string, flags uint64) (int, error) {
	if noOpenat2.Load() {
		return -1, unix.ENOSYS
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   flags | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err == unix.ENOSYS {
		noOpenat2.Store(true)
	}
	return fd, err
}

// lean opens filename (below the root, for reading, flag as given) with no link
// followed anywhere in its path; a name missing on such a path is the error the
// chroot returns for it (its lookups find no link, then the open finds nothing);
// (nil, nil) leaves the open to the wrapped file system.
func (l leanFS) lean(filename string, flag int) (billy.File, error) {
	if !filepath.IsLocal(filename) {
		return nil, nil
	}
	root := l.Root()
	full := filepath.Join(root, filename) // the chroot's own join
	fd, err := openat2(full, uint64(flag))
	if err == unix.ENOENT {
		return nil, &os.PathError{Op: "open", Path: full, Err: syscall.ENOENT}
	}
	if err != nil {
		return nil, nil
	}
	name, err := filepath.Rel(root, full) // the name the chroot's file gives
	if err != nil {
		name = filename
	}
	return &leanFile{File: os.NewFile(uintptr(fd), full), name: name}, nil
}

// leanStat returns what the chroot's Stat of filename returns when its path
// holds no link (a missing name's error included), or (nil, nil) for the
// wrapped file system to answer.
func (l leanFS) leanStat(filename string) (os.FileInfo, error) {
	if !filepath.IsLocal(filename) {
		return nil, nil
	}
	full := filepath.Join(l.Root(), filename)
	fd, err := openat2(full, unix.O_PATH)
	if err == unix.ENOENT {
		return nil, &os.PathError{Op: "stat", Path: full, Err: syscall.ENOENT}
	}
	if err != nil {
		return nil, nil
	}
	fi := &leanInfo{name: filepath.Base(filename)}
	err = syscall.Fstat(fd, &fi.sys)
	_ = unix.Close(fd)
	if err != nil {
		return nil, nil
	}
	return fi, nil
}

// leanInfo is a file's information as os.Stat fills it (fillFileStatFromSys),
// under the name the chroot gives it.
type leanInfo struct {
	name string
	sys  syscall.Stat_t
}

func (fi *leanInfo) Name() string       { return fi.name }
func (fi *leanInfo) Size() int64        { return fi.sys.Size }
func (fi *leanInfo) ModTime() time.Time { return time.Unix(fi.sys.Mtim.Unix()) }
func (fi *leanInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *leanInfo) Sys() any           { return &fi.sys }

// Mode is os.FileMode as the os package makes it from the stat's mode.
func (fi *leanInfo) Mode() os.FileMode {
	m := os.FileMode(fi.sys.Mode & 0o777)
	switch fi.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= os.ModeDevice
	case syscall.S_IFCHR:
		m |= os.ModeDevice | os.ModeCharDevice
	case syscall.S_IFDIR:
		m |= os.ModeDir
	case syscall.S_IFIFO:
		m |= os.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= os.ModeSymlink
	case syscall.S_IFSOCK:
		m |= os.ModeSocket
	}
	if fi.sys.Mode&syscall.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if fi.sys.Mode&syscall.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if fi.sys.Mode&syscall.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}

// leanFile is a file LeanFS opened: an *os.File with the chroot's name and
// osfs's locks.
type leanFile struct {
	*os.File
	name string
	m    sync.Mutex
}

// Name is the file's name below the root, as the chroot gives it.
func (f *leanFile) Name() string { return f.name }

// Lock locks the file as osfs does.
func (f *leanFile) Lock() error {
	f.m.Lock()
	defer f.m.Unlock()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX)
}

// Unlock unlocks the file as osfs does.
func (f *leanFile) Unlock() error {
	f.m.Lock()
	defer f.m.Unlock()
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
