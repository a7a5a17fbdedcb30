//go:build !unix

package platform

import (
	"fmt"
	"os"
)

// errNoFlock is the refusal of every lock here.
var errNoFlock = fmt.Errorf("file locks (flock) are %w; replay does not write a run's shared files unlocked", ErrUnsupported)

// Lock refuses: this system has no flock(2) (see docs/platforms.md).
func Lock(*os.File) error { return errNoFlock }

// LockShared refuses: this system has no flock(2).
func LockShared(*os.File) error { return errNoFlock }

// TryLock refuses: this system has no flock(2).
func TryLock(*os.File) error { return errNoFlock }

// Unlock does nothing: no lock was taken.
func Unlock(*os.File) error { return nil }

// WriteOnce writes b to f with one File.Write.
func WriteOnce(f *os.File, b []byte) (int, error) { return f.Write(b) }
