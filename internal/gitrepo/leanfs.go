package gitrepo

import (
	"os"

	"github.com/go-git/go-billy/v5"
)

// LeanFS wraps a repository's go-billy file system (osfs.New: a chroot that
// looks up every component of every path it opens with an lstat, to follow
// links inside its root) so that a file opened for reading whose path holds no
// link at all is opened with one system call (openat2 with
// RESOLVE_NO_SYMLINKS, on Linux). The chroot would have opened the same file:
// with no link on the way its lookups change nothing. Any other case (a write, a
// name outside the root, a link on the way, any error, a system without
// openat2) goes to the wrapped file system as before, so its results and errors
// are the chroot's own (a name missing on a path with no link is the error it
// gives). Every loose object and ref go-git reads is such an open,
// and every ref it reads is first such a Stat.
func LeanFS(fs billy.Filesystem) billy.Filesystem {
	if _, ok := fs.(billy.Chmod); !ok {
		return fs // not the chroot this is for: leave it as it is
	}
	return leanFS{fs}
}

type leanFS struct{ billy.Filesystem }

// Open opens filename for reading.
func (l leanFS) Open(filename string) (billy.File, error) {
	if f, err := l.lean(filename, os.O_RDONLY); f != nil || err != nil {
		return f, err
	}
	return l.Filesystem.Open(filename)
}

// OpenFile opens filename; an open for reading only may take the lean path.
func (l leanFS) OpenFile(filename string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND|os.O_EXCL) == 0 {
		if f, err := l.lean(filename, flag); f != nil || err != nil {
			return f, err
		}
	}
	return l.Filesystem.OpenFile(filename, flag, perm)
}

// Stat returns filename's information: through one open of the path (no link
// followed anywhere) and its fstat when it holds no link, else the wrapped file
// system's.
func (l leanFS) Stat(filename string) (os.FileInfo, error) {
	if fi, err := l.leanStat(filename); fi != nil || err != nil {
		return fi, err
	}
	return l.Filesystem.Stat(filename)
}

// Chmod is the wrapped file system's (go-git sets the mode of the objects it
// writes when the file system has it).
func (l leanFS) Chmod(name string, mode os.FileMode) error {
	return l.Filesystem.(billy.Chmod).Chmod(name, mode)
}

// Capabilities are the wrapped file system's.
func (l leanFS) Capabilities() billy.Capability { return billy.Capabilities(l.Filesystem) }
