package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"

	"github.com/replaytool/replay/internal/platform"
)

// ErrNotFresh is wrapped by InitNew's error for a directory that is not one
// replay may make a repository in: a symbolic link, a file, or a directory that
// holds a .git already (of any kind: a directory, a file, a link).
var ErrNotFresh = errors.New("is not a directory without a repository")

// InitNew makes dir a new git repository with a working tree (go-git's
// PlainInitWithOptions; opts nil for its defaults) after proving what dir is:
// missing (it is created), or a real directory with no .git in it (the files
// replay wrote there, a checkpoint's, stay untracked). A symbolic link in
// dir's place (which would send .git and every later write elsewhere), a file,
// or a .git already there (a planted git dir, a .git file or link naming
// another repository) is refused with an error wrapping ErrNotFresh, and
// nothing is written. For a repository replay creates itself: an A/B worktree,
// the demo's example project.
func InitNew(dir string, opts *git.PlainInitOptions) (*git.Repository, error) {
	if err := checkFresh(dir); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &git.PlainInitOptions{}
	}
	//replay:door the directory was just proved missing or a real directory with no .git (checkFresh)
	return git.PlainInitWithOptions(dir, opts)
}

// checkFresh refuses dir unless it is missing or a real directory with no .git.
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
	dot := filepath.Join(dir, git.GitDirName)
	if st, err := os.Lstat(dot); err == nil {
		return fmt.Errorf("%s %w: %s is there already (%s); replay makes a repository only in a directory it creates: remove it and run again", dir, ErrNotFresh, dot, platform.DescribeMode(st.Mode()))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
