package platform

import (
	"fmt"
	"io/fs"
	"os"
)

// openChecked is the no-follow open of a system without O_NOFOLLOW (Windows),
// portable so every system's tests run it: an exclusive create opens as is; any
// other write is refused (ErrUnsupported); a read opens the name Lstat found not
// to be a link and checks the handle is that very file.
func openChecked(name string, flag int, open func(int) (*os.File, error), lstat func() (fs.FileInfo, error)) (*os.File, error) {
	const exclusive = os.O_CREATE | os.O_EXCL
	if flag&exclusive == exclusive {
		return open(flag)
	}
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_TRUNC|os.O_CREATE) != 0 {
		return nil, fmt.Errorf("%s: writing a file that exists without following a symbolic link is %w (no O_NOFOLLOW)", name, ErrUnsupported)
	}
	before, err := lstat()
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", name, ErrLink)
	}
	f, err := open(flag)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err != nil || !os.SameFile(before, opened) {
		f.Close()
		return nil, fmt.Errorf("%s %w (it changed while being opened)", name, ErrLink)
	}
	return f, nil
}
