package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
)

// CheckShadowDir refuses a shadow checkpoint directory that is not a real directory
// owned by this project, before anything reads its HEAD or writes its refs and
// index: a symbolic link in its place (a run or store can plant one, aimed at any
// repository's .git), a directory that resolves inside a repository's .git, and the
// git directory of a work tree (a linked worktree's or submodule's admin directory,
// or one that is not bare and names no work tree of its own: its HEAD and index are
// that work tree's). A directory that does not exist yet is checked by where it
// would be created. The error is of kind ErrRefused and names the directory.
func CheckShadowDir(shadowDir string) error {
	abs, err := filepath.Abs(shadowDir)
	if err != nil {
		return fmt.Errorf("shadow directory %s: %w", shadowDir, err)
	}
	if err := noLinkedLayoutDirs(abs); err != nil {
		return err
	}
	st, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notInsideGitDir(abs, realAncestor(abs))
	case err != nil:
		return fmt.Errorf("shadow directory %s: %w", abs, err)
	case st.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(abs)
		return refuseShadow(abs, "is a symbolic link (to %s); the shadow checkpoint directory must be a real directory, never a link a run or store could plant", target)
	case !st.IsDir():
		return refuseShadow(abs, "is not a directory")
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("shadow directory %s: %w", abs, err)
	}
	if err := notInsideGitDir(abs, real); err != nil {
		return err
	}
	return notAWorkTreesGitDir(abs)
}

// refuseShadow returns the one-line refusal of shadow directory dir.
func refuseShadow(dir, format string, args ...any) error {
	return errkind.Errorf(ErrRefused, "%s: the shadow checkpoint directory %s; give this project's own shadow directory (or --shadow DIR) and run again; nothing was changed",
		dir, fmt.Sprintf(format, args...))
}

// notInsideGitDir refuses dir when real, its resolved path, lies inside (or is) a
// directory named .git.
func notInsideGitDir(dir, real string) error {
	parts := strings.Split(filepath.ToSlash(real), "/")
	for i, p := range parts {
		if p == ".git" {
			return refuseShadow(dir, "resolves to %s, inside the git directory %s of a repository", real, filepath.FromSlash(strings.Join(parts[:i+1], "/")))
		}
	}
	return nil
}

// realAncestor returns the resolved path of abs's nearest existing ancestor joined
// with the rest of abs: where a directory that does not exist yet would be made.
func realAncestor(abs string) string {
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// notAWorkTreesGitDir refuses the git directory of a work tree: one with the
// gitdir or commondir file of a linked worktree, or whose config is not bare and
// names no absolute core.worktree (git then takes the work tree from the .git file
// or folder that points at it, and HEAD and index are that tree's).
func notAWorkTreesGitDir(dir string) error {
	for _, name := range []string{"gitdir", "commondir"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return refuseShadow(dir, "is a linked work tree's git directory (it has a %s file): its HEAD and index belong to a work tree", name)
		}
	}
	path := filepath.Join(dir, "config")
	data, err := runfile.ReadFile(path, runfile.GitConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg := config.NewConfig()
	if err := cfg.Unmarshal(data); err != nil {
		return fmt.Errorf("%s: the shadow repository's config cannot be parsed (%v); fix or remove it", path, err)
	}
	core := cfg.Raw.Section("core")
	if core.Option("bare") == "true" || filepath.IsAbs(core.Option("worktree")) {
		return nil
	}
	return refuseShadow(dir, "is the git directory of a work tree (core.bare is not true and core.worktree names no absolute directory): its HEAD and index belong to a work tree")
}

// noLinkedLayoutDirs refuses a symbolic link in place of a directory of the shadow's
// own layout, .../<H>/checkpoints/<H>: the checkpoints folder and the project
// folder <H> hold what replay and Crucible create, so a link there was planted (a
// run or store can write beside them) and would lead replay's writes into a
// directory it never made. Only the default layout is checked: a shadow given by
// --shadow under another name is the user's path and is followed up to its last
// component.
func noLinkedLayoutDirs(abs string) error {
	checkpoints := filepath.Dir(abs)
	if filepath.Base(checkpoints) != "checkpoints" {
		return nil
	}
	dirs := []string{checkpoints}
	if root := filepath.Dir(checkpoints); filepath.Base(root) == filepath.Base(abs) {
		dirs = append(dirs, root)
	}
	for _, dir := range dirs {
		st, err := os.Lstat(dir)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue // a missing folder is made by replay, as a real directory
		}
		target, _ := os.Readlink(dir)
		return refuseShadow(abs, "is reached through %s, a symbolic link (to %s); the folders of the shadow's layout must be real directories, never a link a run or store could plant", dir, target)
	}
	return nil
}
