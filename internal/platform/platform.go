package platform

import (
	"errors"
	"time"
)

// ErrUnsupported is wrapped by the error of an operation this system cannot do
// with the guarantee replay needs (a lock, a no-follow write): it is refused.
var ErrUnsupported = errors.New("not supported on this operating system")

// ErrWouldBlock is returned by TryLock when another holds the lock.
var ErrWouldBlock = errors.New("the lock is held by another process")

// ErrNotRegular is wrapped by the error for a file that is a FIFO, a device, a
// socket or a directory where replay reads or writes only regular files.
var ErrNotRegular = errors.New("not a regular file")

// ErrLink is wrapped by the error of a no-follow open that met a symbolic link.
var ErrLink = errors.New("is a symbolic link")

// Stat is what the git index records of a file beyond its size and mtime.
type Stat struct {
	Dev, Ino uint64
	UID, GID uint32
	Ctime    time.Time // the status change time
}
