//go:build !unix

package platform

import (
	"fmt"
	"io/fs"
	"os"
)

// ONoFollow is 0: this system has no O_NOFOLLOW (use OpenNoFollow).
const ONoFollow = 0

// ONonBlock is 0: this system has no O_NONBLOCK.
const ONonBlock = 0

// OpenNoFollow opens path with flag and perm without following a symbolic link in
// its last component, where the system cannot refuse one at the open: a read is
// checked after it (the handle must be the very file Lstat names, and that no
// link); an exclusive create (O_CREATE|O_EXCL) never opens an existing name; any
// other write is refused with an error wrapping ErrUnsupported, since a link
// planted between the check and the open would be written through.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openChecked(path, flag, func(fl int) (*os.File, error) { return os.OpenFile(path, fl, perm) }, func() (fs.FileInfo, error) { return os.Lstat(path) })
}

// OpenInRootNoFollow is OpenNoFollow for rel inside r.
func OpenInRootNoFollow(r *os.Root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	return openChecked(rel, flag, func(fl int) (*os.File, error) { return r.OpenFile(rel, fl, perm) }, func() (fs.FileInfo, error) { return r.Lstat(rel) })
}

// OpenDirNoFollow opens the directory path for reading (to list or lock it),
// never through a symbolic link in its last component: the checked read of
// OpenNoFollow, then the handle must be a directory.
func OpenDirNoFollow(path string) (*os.File, error) {
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: not a directory", path)
	}
	return f, nil
}
