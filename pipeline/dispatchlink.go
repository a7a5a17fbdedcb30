package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
)

// CheckDispatchDir refuses a dispatch directory that is a symbolic link the run
// holds (its name inside the scratch dir or TMPDIR leads elsewhere: to
// ~/.claude/commands, say), so that no dispatch file, manifest line, sidecar,
// backup or recording is written through it. named is the directory the user
// named as PATH (absolute, "" when none): that one is the user's own and is
// followed. The bookkeeping commands (`replay manifest before/after/repair/
// cleanup --dir D`) pass "": their D is the pipeline's $DISPATCH_DIR, which
// Crucible makes with mkdir, never a link. Reads are not refused: a plan warns.
func CheckDispatchDir(dir, named string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Lstat(filepath.Clean(dir))
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if named != "" && filepath.Clean(named) == filepath.Clean(dir) {
		return nil
	}
	target, _ := os.Readlink(filepath.Clean(dir))
	return errkind.Errorf(checkpoint.ErrRefused, "the dispatch directory %s is a symbolic link (to %q): replay never writes a run's files through a link it holds, which could lead anywhere; replace the link by the directory it names, or give that directory as PATH (nothing was written)", dir, target)
}

// linkedDispatchDir is CheckDispatchDir with the PATH of o, made absolute from its Cwd.
func linkedDispatchDir(dir string, o Options) error {
	named := o.Path
	if named != "" && !filepath.IsAbs(named) {
		named = filepath.Join(o.Cwd, named)
	}
	return CheckDispatchDir(dir, named)
}

// CheckProjectsDir refuses a directory replay writes under home's
// ~/.claude/projects (a scratch directory, a dispatch directory kept in one) that
// is reached through a symbolic link below that folder: the project folder <H>,
// memory, or any folder between it and dir, dir itself included. Those are
// the folders Crucible and Claude Code make with mkdir and that runs, stores and
// archives bring; a link there was planted, and replay's writes (archived
// markers, the durable dispatch copy, A/B worktrees, forks) would land where it
// leads. The rule holds whoever gave the path (found from $HOME, the PATH, the
// run's files or --scratch): the refusal says to give the directory the link
// leads to, which lies outside the layout. A scratch directory outside
// ~/.claude/projects is the user's own path (a link they made) and is followed,
// as are ~/.claude and ~/.claude/projects themselves (the user's dotfiles may
// link them; whatever can replace them already controls Claude Code's
// settings). A folder that does not exist yet is made by replay as a real
// directory. The error is of kind checkpoint.ErrRefused and names the link.
func CheckProjectsDir(dir, home string) error {
	if dir == "" || home == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	forms := []string{abs}
	if parent, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil && parent != filepath.Dir(abs) {
		forms = append(forms, filepath.Join(parent, filepath.Base(abs))) // reached through a link to the layout
	}
	for _, projects := range projectsForms(home) {
		var rel string
		for _, f := range forms {
			if r, err := filepath.Rel(projects, f); err == nil && filepath.IsLocal(r) {
				rel = r
				break
			}
		}
		if rel == "" {
			continue
		}
		at := projects
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			at = filepath.Join(at, part)
			st, err := os.Lstat(at)
			if err != nil {
				return nil // made by replay, as a real directory
			}
			if st.Mode()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(at)
				return errkind.Errorf(checkpoint.ErrRefused, "%s is reached through %s, a symbolic link (to %q): the folders of ~/.claude/projects are made by Crucible and Claude Code, never links, so replay never writes through one a run, store or archive could plant; replace the link by the directory it names, or give that directory instead (--scratch, --dir) (nothing was written)", dir, at, target)
			}
			if !st.IsDir() {
				return nil // not a directory: the writer's own error names it
			}
		}
		return nil
	}
	return nil
}

// projectsForms are home's ~/.claude/projects as given and with its links
// resolved (a dotfiles link, a home under /home -> /usr/home), when that differs.
func projectsForms(home string) []string {
	abs, err := filepath.Abs(filepath.Join(home, ".claude", "projects"))
	if err != nil {
		return nil
	}
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	return out
}
