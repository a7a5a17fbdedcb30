package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/go-git/go-git/v5/config"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/runfile"
)

// CheckShadowProject refuses a shadow repository that belongs to another directory
// than projectDir (the current directory or --repo): one whose core.worktree, or
// whose directory name <H>, names a different project. Both sides are compared after
// resolving symlinks, so the real path and a symlinked path of one project agree.
// A run's files never choose where replay writes: a received run's shadow repository
// that points at another clone is refused, never followed. The error is of kind ErrForeignShadow.
func CheckShadowProject(shadowDir, projectDir string) error {
	project := realPath(projectDir)
	worktree, err := worktreeOf(shadowDir)
	if err != nil {
		return err
	}
	if worktree != "" && realPath(worktree) != project {
		return errkind.Errorf(ErrForeignShadow,
			"%s: the shadow repository's core.worktree is %s, but the project directory is %s (the current directory or --repo); replay only restores into the project directory: run it from %s or pass --repo if that is the project, else give the shadow repository of %s with --shadow; nothing was changed",
			shadowDir, worktree, projectDir, worktree, projectDir)
	}
	h := filepath.Base(filepath.Clean(shadowDir))
	if !isProjectHash(h) {
		return nil // a shadow repository given by --shadow under another name
	}
	if h != paths.ProjectHash(projectDir) && h != paths.ProjectHash(project) {
		return errkind.Errorf(ErrForeignShadow,
			"%s: the shadow repository is named for project hash %s, but the project directory %s (the current directory or --repo) has hash %s; it belongs to another project: run replay from that project or pass its directory with --repo; nothing was changed",
			shadowDir, h, projectDir, paths.ProjectHash(project))
	}
	return nil
}

// isProjectHash reports whether name has the shape of <H>: 16 lowercase hex digits.
func isProjectHash(name string) bool {
	if len(name) != 16 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// realPath is dir made absolute with its symlinks resolved; when it cannot be
// resolved (it does not exist), the cleaned absolute path.
func realPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// worktreeOf returns the core.worktree of the shadow git dir, "" when it has no
// config or no absolute core.worktree. A config that cannot be read is an error.
func worktreeOf(shadowDir string) (string, error) {
	path := filepath.Join(shadowDir, "config")
	data, err := runfile.ReadFile(path, runfile.GitConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	cfg := config.NewConfig()
	if err := cfg.Unmarshal(data); err != nil {
		return "", fmt.Errorf("%s: the shadow repository's config cannot be parsed (%v); fix or remove it", path, err)
	}
	wt := cfg.Raw.Section("core").Option("worktree")
	if wt == "" || !filepath.IsAbs(wt) {
		return "", nil
	}
	return filepath.Clean(wt), nil
}
