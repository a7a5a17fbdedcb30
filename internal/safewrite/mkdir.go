package safewrite

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// MkdirIn makes sure root/rel and every directory on the way to it are real
// directories, creating the missing ones, under the rules of OpenInRoot: root is the
// caller's (followed); below it a symbolic link is refused with an error wrapping
// ErrLink, a file where a directory belongs with a "not a directory" error, and a
// name leaving the root ("..") with ErrLink. Nothing is created through either.
func MkdirIn(root, rel string) error {
	r, err := openRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return mkdirsIn(r, root, filepath.Clean(rel))
}

// MkdirNew creates root/rel, which must not exist yet, after making sure its parent
// directories are real ones as MkdirIn does. A real directory already there is an
// error wrapping fs.ErrExist (the caller picks another name); a symbolic link or a
// file in its place is refused as MkdirIn refuses it, so a name planted in a run
// never stands in for a directory replay creates.
func MkdirNew(root, rel string) error {
	rel = filepath.Clean(rel)
	r, err := openRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := mkdirsIn(r, root, filepath.Dir(rel)); err != nil {
		return err
	}
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %q leaves the directory; %w", root, rel, ErrLink)
	}
	path := filepath.Join(root, rel)
	err = r.Mkdir(rel, 0o755) // mkdir(2) never follows a link in the last place
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: cannot create the directory: %w", path, err)
	}
	st, lerr := r.Lstat(rel)
	if lerr != nil {
		return fmt.Errorf("%s: %w", path, lerr)
	}
	if err := realDir(path, st); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w", path, fs.ErrExist)
}
