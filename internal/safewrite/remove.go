package safewrite

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// RemoveIn removes the file root/rel under the rules of OpenInRoot: root is the
// caller's (followed); a name that leaves the root, by ".." or by a link, is
// refused, and a link at rel itself is removed, never what it points to. A file
// already gone is no error.
func RemoveIn(root, rel string) error {
	r, err := openRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Remove(filepath.Clean(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
