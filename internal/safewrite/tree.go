package safewrite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAll makes the directory path and its missing parents, as mkdir -p does,
// for a path the user named (a flag, an argument) or replay made itself (a temp
// directory), never a name read from a run (use MkdirIn under the run's root for
// those). The directories that exist are the user's and are followed as the
// shell follows them; each missing one is created with mkdir(2), which never
// follows a link, and what ends the path must be a directory.
func MkdirAll(path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the directory: %w", path, err)
	}
	return nil
}

// WriteFile writes data to the file at path (created with perm, cut by the
// umask, or truncated), making its missing parent directories as MkdirAll does:
// for a file of a tree replay builds itself (the demo's example pipeline, a
// fixture) or one the user named. The file itself is opened as OpenInRoot opens
// it, in its directory: a symbolic link, a FIFO or a device in its place is
// refused (ErrLink, ErrNotRegular), never written through. It is not synced: use
// WriteAtomicIn for a file that must survive a crash whole.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir); err != nil {
		return err
	}
	return WriteFileIn(dir, filepath.Base(path), data, perm)
}

// WriteFileIn writes data to root/rel (created with perm, cut by the umask, or
// truncated) under the rules of OpenInRoot: the missing directories of rel are
// made, none through a link, and a link, FIFO or directory at rel is refused.
// It is not synced: for a file whose loss a crash may cost (a working tree's
// file git records, a fixture); use WriteAtomicIn for one that must survive whole.
func WriteFileIn(root, rel string, data []byte, perm os.FileMode) error {
	path := filepath.Join(root, rel)
	f, err := OpenInRoot(root, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	return nil
}

// RemoveAllIn removes root/rel and everything below it under the rules of
// OpenInRoot: root is the caller's (followed); a name that leaves the root, by
// ".." or through a link on the way, is refused; a link at rel or anywhere below
// it is removed itself, never what it points to. A name already gone is no error.
func RemoveAllIn(root, rel string) error {
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %q leaves the directory; %w", root, rel, ErrLink)
	}
	r, err := openRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.RemoveAll(rel); err != nil {
		return fmt.Errorf("%s: cannot remove: %w", filepath.Join(root, rel), err)
	}
	return nil
}

// RemoveAllPath is RemoveAllIn for a whole path replay made itself (a temp
// directory, a worktree it created): the path's parent is the root, so a link
// at path is removed, never followed, and nothing outside path is touched.
func RemoveAllPath(path string) error {
	return RemoveAllIn(filepath.Dir(path), filepath.Base(path))
}

// RemovePath is RemoveIn for a whole path: the file or empty directory at path
// is removed, a link there itself, never what it points to. A name already gone
// is no error.
func RemovePath(path string) error {
	return RemoveIn(filepath.Dir(path), filepath.Base(path))
}

// RenameIn renames root/from to root/to, both inside root: a name that leaves
// the root, by ".." or through a link on the way, is refused; a link at from is
// renamed as the link itself (rename(2) never follows the last name). An
// existing to is replaced as rename(2) replaces it (an empty directory by a
// directory, a file by a file).
func RenameIn(root, from, to string) error {
	from, to = filepath.Clean(from), filepath.Clean(to)
	if !filepath.IsLocal(from) || !filepath.IsLocal(to) {
		return fmt.Errorf("%s: renaming %q to %q leaves the directory; %w", root, from, to, ErrLink)
	}
	r, err := openRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Rename(from, to)
}
