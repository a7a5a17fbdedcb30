package safewrite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/internal/platform"
)

// WithLock opens path for appending (created when missing) and runs fn under an
// exclusive advisory lock on it, so concurrent appenders never interleave. The file
// is opened as OpenInRoot does, in its directory: a symlinked file is refused
// (ErrLink), never appended through.
func WithLock(path string, fn func(f *os.File) error) error {
	f, err := OpenInRoot(filepath.Dir(path), filepath.Base(path), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, ErrLink) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: cannot open for appending: %w", path, err)
	}
	defer f.Close()
	if err := platform.Lock(f); err != nil {
		return fmt.Errorf("%s: cannot lock: %w", path, err)
	}
	defer func() { _ = platform.Unlock(f) }() // closing releases it too
	return fn(f)
}

// AppendLocked writes line (which ends in a newline) to f, opened by WithLock, in
// exactly one write(2), then fsyncs. When the file ends in a torn line without a
// newline, the write starts with one so the new line stands on its own.
func AppendLocked(f *os.File, path string, line []byte) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if size := st.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: cannot read its end: %w", path, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := platform.WriteOnce(f, line) // exactly one write(2)
	if err != nil {
		return fmt.Errorf("%s: cannot append: %w", path, err)
	}
	if n != len(line) {
		return fmt.Errorf("%s: short write (%d of %d bytes); the last line may be torn", path, n, len(line))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: cannot fsync: %w", path, err)
	}
	return nil
}

// AppendLine appends line (a newline is added when missing) to the file at path
// under its lock, in one write.
func AppendLine(path string, line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(append([]byte{}, line...), '\n')
	}
	return WithLock(path, func(f *os.File) error { return AppendLocked(f, path, line) })
}

// WriteAtomic replaces the file at path with data (mode 0644): it writes a temp file
// beside it, fsyncs and renames it, so a crash leaves the old or the new content and
// nothing in between. The parent directory is created when missing. A path that is a
// symbolic link is refused (ErrLink), never replaced or written through: see
// WriteAtomicIn, with the parent directory as the root.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the directory: %w", dir, err)
	}
	return WriteAtomicIn(dir, filepath.Base(path), data)
}
