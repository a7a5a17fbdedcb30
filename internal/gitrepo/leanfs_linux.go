package gitrepo

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"golang.org/x/sys/unix"
)

// lean opens filename (below the root, for reading, flag as given) with no link
// followed anywhere in its path, or returns nil for the wrapped file system to
// open it.
func (l leanFS) lean(filename string, flag int) billy.File {
	if !filepath.IsLocal(filename) {
		return nil
	}
	root := l.Root()
	full := filepath.Join(root, filename) // the chroot's own join
	fd, err := unix.Openat2(unix.AT_FDCWD, full, &unix.OpenHow{
		Flags:   uint64(flag) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil
	}
	name, err := filepath.Rel(root, full) // the name the chroot's file gives
	if err != nil {
		name = filename
	}
	return &leanFile{File: os.NewFile(uintptr(fd), full), name: name}
}

// leanStat returns what the chroot's Stat of filename returns when its path
// holds no link, or nil for the wrapped file system to answer.
func (l leanFS) leanStat(filename string) os.FileInfo {
	if !filepath.IsLocal(filename) {
		return nil
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, filepath.Join(l.Root(), filename), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil
	}
	fi := &leanInfo{name: filepath.Base(filename)}
	err = syscall.Fstat(fd, &fi.sys)
	_ = unix.Close(fd)
	if err != nil {
		return nil
	}
	return fi
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
