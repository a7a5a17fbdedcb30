package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/go-git/go-git/v5"

	"github.com/replaytool/replay/internal/platform"
)

// ErrNotFresh is wrapped by InitNew's error for a directory that is not a new
// one: a symbolic link, a file, or a directory that holds anything already.
var ErrNotFresh = errors.New("is not a new, empty directory")

// InitNew makes dir a new git repository with a working tree (go-git's
// PlainInitWithOptions; opts nil for its defaults) after proving what dir is:
// missing (it is created), or a real, empty directory. A symbolic link in
// dir's place (which would send .git and every later write elsewhere), a file,
// or a directory with anything in it (a planted .git, a repository with
// core.worktree) is refused with an error wrapping ErrNotFresh, and nothing is
// written. For a repository replay creates itself: an A/B worktree, the demo's
// example project.
func InitNew(dir string, opts *git.PlainInitOptions) (*git.Repository, error) {
	if err := checkFresh(dir); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &git.PlainInitOptions{}
	}
	//replay:door the directory was just proved missing or a real, empty directory (checkFresh)
	return git.PlainInitWithOptions(dir, opts)
}

// checkFresh refuses dir unless it is missing or a real, empty directory.
func checkFresh(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() || st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w (it is %s); replay makes a repository only in a directory it creates: remove it and run again", dir, ErrNotFresh, platform.DescribeMode(st.Mode()))
	}
	d, err := platform.OpenDirNoFollow(dir) // a link planted since the Lstat is refused
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Readdirnames(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		return fmt.Errorf("%s %w (it holds files already); replay makes a repository only in a directory it creates: remove it and run again", dir, ErrNotFresh)
	}
	return nil
}
