//go:build unix

package platform

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock(2) on f, waiting for it.
func Lock(f *os.File) error { return flock(f, unix.LOCK_EX) }

// LockShared takes a shared flock(2) on f, waiting for it.
func LockShared(f *os.File) error { return flock(f, unix.LOCK_SH) }

// TryLock takes an exclusive flock(2) on f without waiting: ErrWouldBlock when
// another holds it.
func TryLock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
		return ErrWouldBlock
	}
	if err != nil {
		return fmt.Errorf("flock: %w", err)
	}
	return nil
}

// Unlock gives up f's lock (closing f does too).
func Unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("flock: %w", err)
		}
		return nil
	}
}

// WriteOnce writes b to f in exactly one write(2) (an O_APPEND write of one line
// lands whole); n < len(b) is a short write the caller reports.
func WriteOnce(f *os.File, b []byte) (int, error) {
	for {
		n, err := unix.Write(int(f.Fd()), b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return max(n, 0), err
	}
}
