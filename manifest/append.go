package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Append writes e as one line at the end of the manifest at manifestPath (created
// when missing): compact JSON in the SPEC §2 field order, one write(2) of at most
// MaxLineBytes, under an exclusive advisory lock on the file, with O_APPEND, then
// fsync'd. When the file ends in a torn line without newline, the write starts with
// a newline so the new entry stands on its own line.
func Append(manifestPath string, e Entry) error {
	line, err := EncodeLine(e)
	if err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	return withLock(manifestPath, func(f *os.File) error {
		return appendLocked(f, manifestPath, line)
	})
}

// withLock opens the manifest for appending and runs fn under an exclusive flock.
func withLock(manifestPath string, fn func(f *os.File) error) error {
	f, err := os.OpenFile(manifestPath, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: cannot open the manifest for appending: %w", manifestPath, err)
	}
	defer f.Close()
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("%s: cannot lock the manifest: %w", manifestPath, err)
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }() // closing releases it too
	return fn(f)
}

func appendLocked(f *os.File, manifestPath string, line []byte) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	if size := st.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: cannot read the end of the manifest: %w", manifestPath, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := unix.Write(int(f.Fd()), line) // exactly one write(2)
	if err != nil {
		return fmt.Errorf("%s: cannot append the entry: %w", manifestPath, err)
	}
	if n != len(line) {
		return fmt.Errorf("%s: short write (%d of %d bytes); the last line may be torn", manifestPath, n, len(line))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: cannot fsync the manifest: %w", manifestPath, err)
	}
	return nil
}
