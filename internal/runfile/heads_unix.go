//go:build unix

package runfile

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Heads reads the heads of the files of one directory through a descriptor of
// the directory: each file costs an openat of its name (no walk of the directory's
// path), an fstat, a read and a close, with none of an os.File's bookkeeping (poller
// registration, finalizer), which on a directory of thousands of files halves the
// time of the reads. The checks are ReadHead's: symlinks are followed, and
// what is opened must be a regular file; the open never blocks (O_NONBLOCK).
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

// Read returns at most len(buf) first bytes of the file name, read into buf.
func (r *Heads) Read(name string, buf []byte) ([]byte, error) {
	if r.fd < 0 {
		return ReadHead(filepath.Join(r.dir, name), r.kind, len(buf))
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(r.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	})
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, ErrNotRegular
	}
	// As ReadHead: no more than the size the file had when opened (all of
	// buf when it reports no size).
	if st.Size > 0 && st.Size < int64(len(buf)) {
		buf = buf[:st.Size]
	}
	return readFull(fd, buf)
}

// ReadListed is Read for a file its caller listed as a regular file (the
// directory entry's type): it saves Read's fstat, a quarter of the system calls.
// What the listing proved is kept: the file is opened with O_NOFOLLOW, so a
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

// minRingFiles is the fewest files ReadListedAll reads through a ring: setting one
// up costs about what reading a few dozen files by system calls saves.
const minRingFiles = 32

// ReadListedAll is ReadListed for each of names, at most size bytes of each: it
// calls f(i, head, err) for each, in order, head being valid during the call only.
// On Linux it reads through an io_uring when the kernel offers one fit for it, two
// system calls for every 128 files instead of three a file; the files opened and
// the bytes read are ReadListed's.
func (r *Heads) ReadListedAll(names []string, size int, f func(i int, head []byte, err error)) {
	r.readListedAll(names, size, f, true)
}

// readListedAll is ReadListedAll, through a ring only when ring is true.
func (r *Heads) readListedAll(names []string, size int, f func(i int, head []byte, err error), ring bool) {
	if ring && r.fd >= 0 && len(names) >= minRingFiles && readListedRing(r, names, size, f) {
		return
	}
	buf := make([]byte, size)
	for i, name := range names {
		head, err := r.ReadListed(name, buf)
		f(i, head, err)
	}
}

// readFull reads fd until buf is full or the end of the file.
func readFull(fd int, buf []byte) ([]byte, error) {
	got := 0
	for got < len(buf) {
		n, err := unix.Read(fd, buf[got:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		got += n
	}
	return buf[:got], nil
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
