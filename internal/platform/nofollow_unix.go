//go:build unix

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ONoFollow makes an open fail on a symbolic link in the last component
// (O_NOFOLLOW); 0 where the system has none (use OpenNoFollow there).
const ONoFollow = syscall.O_NOFOLLOW

// ONonBlock makes an open of a FIFO return at once (O_NONBLOCK); 0 where the
// system has none.
const ONonBlock = syscall.O_NONBLOCK

// OpenNoFollow opens path with flag and perm, never following a symbolic link in
// its last component: a link is an error wrapping ErrLink.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|ONoFollow, perm)
	return f, linkErr(path, err)
}

// OpenInRootNoFollow is OpenNoFollow for rel inside r: rel's directory is opened
// through r (so it cannot lead outside r), then its last name with O_NOFOLLOW
// relative to that directory. An os.Root alone would follow a link that stays
// inside the root, even with O_NOFOLLOW in flag.
func OpenInRootNoFollow(r *os.Root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(rel)
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("%s: not the name of a file in %s", rel, r.Name())
	}
	if dir == "" {
		dir = "."
	}
	d, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	for {
		fd, err := unix.Openat(int(d.Fd()), base, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, linkErr(rel, &fs.PathError{Op: "open", Path: filepath.Join(r.Name(), rel), Err: err})
		}
		return os.NewFile(uintptr(fd), filepath.Join(r.Name(), rel)), nil
	}
}

// OpenDirNoFollow opens the directory path for reading (to list or lock it),
// never through a symbolic link in its last component (ErrLink) and never
// anything but a directory (O_DIRECTORY). Linux answers a link with ENOTDIR
// there: a name Lstat finds to be a link is reported as one.
func OpenDirNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|ONoFollow|unix.O_DIRECTORY, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s %w", path, ErrLink)
		}
	}
	return f, linkErr(path, err)
}

// linkErr wraps ErrLink into the error of an O_NOFOLLOW open that met a link:
// ELOOP, or EMLINK where FreeBSD and DragonFly say so, or EFTYPE on NetBSD.
func linkErr(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, noFollowErrno) {
		return fmt.Errorf("%s %w", path, ErrLink)
	}
	return err
}
