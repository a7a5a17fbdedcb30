//go:build unix

package runfile

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Heads reads the heads of the files of one directory that its caller listed as
// regular files, through a descriptor of the directory: each file costs an openat
// of its name (no walk of the directory's path), a read and a close, with none of
// an os.File's bookkeeping (poller registration, finalizer). Opens never follow a symbolic link and never
// block (O_NOFOLLOW, O_NONBLOCK).
type Heads struct {
	dir  string
	kind Kind
	fd   int // -1: read each file by its path
}

// OpenHeads opens dir for reading the heads of its files of the given kind; when
// the directory cannot be opened, each read goes by path (and says why it fails).
func OpenHeads(dir string, kind Kind) *Heads {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		fd = -1
	}
	return &Heads{dir: dir, kind: kind, fd: fd}
}

// Close closes the directory.
func (r *Heads) Close() {
	if r.fd >= 0 {
		_ = unix.Close(r.fd)
	}
}

// ReadListed returns at most len(buf) first bytes of the file name, read into buf,
// for a file its caller listed as a regular file (the directory entry's type): no
// fstat checks it again. What the listing proved is kept: the file is opened with O_NOFOLLOW, so a
// symbolic link put in its place since is refused (ErrNotRegular), and without
// blocking, so a FIFO put there reads as nothing; a directory fails to read.
// At most len(buf) bytes are read, in one read.
func (r *Heads) ReadListed(name string, buf []byte) ([]byte, error) {
	if r.fd < 0 {
		return ReadHead(filepath.Join(r.dir, name), r.kind, len(buf))
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(r.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	})
	if errors.Is(err, unix.ELOOP) {
		return nil, ErrNotRegular
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	// One read: without the size an fstat gave, a second read would only find the
	// end. A short read is the end of a regular file on a local file system.
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:max(n, 0)], nil
	}
}

// retryEINTR calls open until it is not interrupted by a signal.
func retryEINTR(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// oNonBlock makes opening a FIFO return at once instead of waiting for a writer.
const oNonBlock = unix.O_NONBLOCK
