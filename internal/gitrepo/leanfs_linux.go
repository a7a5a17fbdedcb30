package gitrepo

import (
	"os"
	"path/filepath"
	"sync"

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
