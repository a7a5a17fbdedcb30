package gitrepo

import (
	"fmt"
	"os"

	"github.com/go-git/go-billy/v5"

	"github.com/replaytool/replay/internal/platform"
)

// NoWaitFS wraps the filesystem go-git reads a repository replay did not make
// whole (a shadow from a run or store) through: a file opened for reading never
// waits (a FIFO planted as a loose object or ref), never follows a link in its
// last component (to /dev/zero, another repository's object) and must be a
// regular file. Writes go through as they are.
func NoWaitFS(fs billy.Filesystem) billy.Filesystem { return noWaitFS{fs} }

type noWaitFS struct{ billy.Filesystem }

// Open opens filename for reading under NoWaitFS's rules.
func (n noWaitFS) Open(filename string) (billy.File, error) {
	return n.OpenFile(filename, os.O_RDONLY, 0)
}

// OpenFile opens filename; an open for reading only follows NoWaitFS's rules.
func (n noWaitFS) OpenFile(filename string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return n.Filesystem.OpenFile(filename, flag, perm)
	}
	f, err := n.Filesystem.OpenFile(filename, flag|platform.ONonBlock|platform.ONoFollow, perm)
	if err != nil {
		return nil, err
	}
	var st os.FileInfo
	if s, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		st, err = s.Stat() // what was opened, not what the name holds now
	} else {
		st, err = n.Filesystem.Lstat(filename)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a file of a git repository: %w; remove it", filename, platform.DescribeMode(st.Mode()), platform.ErrNotRegular)
	}
	return f, nil
}
