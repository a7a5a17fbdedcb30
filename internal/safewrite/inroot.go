package safewrite

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/platform"
)

// ErrLink is wrapped by the error for a write refused because a directory or file on
// its way is a symbolic link (or not a directory where one is needed).
var ErrLink = errors.New("refusing to write through a symbolic link")

// OpenInRoot opens root/rel for writing with flag (os.O_CREATE and the like) and
// perm, creating the missing directories of rel. root is the directory the caller
// chose (a dispatch directory; the path to it is the user's and is followed). Below
// it, every directory of rel must be a real directory (checked with Lstat) and the
// file itself is opened with O_NOFOLLOW, all through an os.Root, so nothing a run
// plants (a symlinked agent-logs/ or responses/ directory, a symlinked log file,
// a name with "..") can send the write outside root. Such a link is an error
// wrapping ErrLink and nothing is written.
func OpenInRoot(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	r, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := mkdirsIn(r, root, filepath.Dir(rel)); err != nil {
		return nil, err
	}
	if err := notLink(r, root, rel); err != nil {
		return nil, err
	}
	// Never blocks: a FIFO planted in the file's place opens at once (or fails),
	// then is refused as every special file is.
	f, err := platform.OpenInRootNoFollow(r, rel, flag|platform.ONonBlock, perm)
	if err != nil {
		return nil, linkError(filepath.Join(root, rel), err)
	}
	if err := regular(f, filepath.Join(root, rel)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrNotRegular is wrapped by the error for a write refused because the file in
// its place is a FIFO, a device, a socket or a directory.
var ErrNotRegular = platform.ErrNotRegular

// regular refuses f, opened at path, when it is not a regular file.
func regular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, %w (planted in a run?); remove it and run again (nothing was written)", path, platform.DescribeMode(st.Mode()), ErrNotRegular)
	}
	return nil
}

// WriteAtomicIn replaces root/rel with data (mode 0644) under the rules of
// OpenInRoot: a temp file beside it, written, fsync'd and renamed into place within
// the root, so a crash leaves the old or the new content and a planted link is
// refused, never replaced or followed.
func WriteAtomicIn(root, rel string, data []byte) error {
	return WriteAtomicStream(root, rel, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicStream is WriteAtomicIn for content too large to hold: write streams it
// into the temp file, which replaces root/rel only when write returns nil.
func WriteAtomicStream(root, rel string, write func(w io.Writer) error) error {
	return replaceIn(root, rel, write, true)
}

// ReplaceStream is WriteAtomicStream without the fsync, for a file whose reader
// detects a torn or lost write (a checksum) and loses nothing by it (a cache): a
// crash may leave the old content, the new, or a damaged file, never a followed link.
func ReplaceStream(root, rel string, write func(w io.Writer) error) error {
	return replaceIn(root, rel, write, false)
}

// replaceIn writes root/rel through a temp file renamed into place, synced first
// when sync is set.
func replaceIn(root, rel string, write func(w io.Writer) error, sync bool) error {
	path := filepath.Join(root, rel)
	r, err := openRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dir := filepath.Dir(rel)
	if err := mkdirsIn(r, root, dir); err != nil {
		return err
	}
	if err := notLink(r, root, rel); err != nil {
		return err
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("%s: cannot name a temp file: %w", path, err)
	}
	tmpRel := filepath.Join(dir, "."+filepath.Base(rel)+".tmp-"+hex.EncodeToString(suffix[:]))
	tmp, err := platform.OpenInRootNoFollow(r, tmpRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: cannot create a temp file: %w", filepath.Join(root, dir), err)
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644) // O_CREATE's mode is cut by the umask
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmpRel, rel)
	}
	if err != nil {
		r.Remove(tmpRel)
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	return nil
}

// openRoot opens root, the directory the caller chose, as an os.Root.
func openRoot(root string) (*os.Root, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the directory: %w", root, err)
	}
	return r, nil
}

// mkdirsIn makes sure every directory of dir (relative to the root) is a real
// directory, creating the missing ones.
func mkdirsIn(r *os.Root, root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	if !filepath.IsLocal(dir) {
		return fmt.Errorf("%s: %q leaves the directory; %w", root, dir, ErrLink)
	}
	sofar := ""
	for _, part := range strings.Split(filepath.ToSlash(dir), "/") {
		sofar = filepath.Join(sofar, part)
		st, err := r.Lstat(sofar)
		if errors.Is(err, fs.ErrNotExist) {
			if err := r.Mkdir(sofar, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: cannot create the directory: %w", filepath.Join(root, sofar), err)
			}
			if st, err = r.Lstat(sofar); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(root, sofar), err)
			}
		} else if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(root, sofar), err)
		}
		if err := realDir(filepath.Join(root, sofar), st); err != nil {
			return err
		}
	}
	return nil
}

func realDir(path string, st fs.FileInfo) error {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: %w planted in a run; remove it and run again (nothing was written)", path, ErrLink)
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory; remove or rename it and run again (nothing was written)", path)
	}
	return nil
}

// notLink refuses a rel that exists as a symbolic link, or as a special file
// (a FIFO would block the open that writes it, a device would swallow the write).
func notLink(r *os.Root, root, rel string) error {
	st, err := r.Lstat(rel)
	switch {
	case err != nil:
		return nil
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: %w planted in a run; remove it and run again (nothing was written)", filepath.Join(root, rel), ErrLink)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is %s, %w (planted in a run?); remove it and run again (nothing was written)", filepath.Join(root, rel), platform.DescribeMode(st.Mode()), ErrNotRegular)
	}
	return nil
}

// linkError turns the ELOOP of an O_NOFOLLOW open (a link appeared since the check)
// into the ErrLink message.
func linkError(path string, err error) error {
	if errors.Is(err, platform.ErrLink) {
		return fmt.Errorf("%s is a symbolic link: %w planted in a run; remove it and run again (nothing was written)", path, ErrLink)
	}
	return fmt.Errorf("%s: cannot open for writing: %w", path, err)
}
