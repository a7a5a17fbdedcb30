package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/runfile"
)

// IdentityKey is the shadow config's option (section replay) that records the
// project a shadow repository belongs to: "git:<root commit>", the same in every
// clone at any path.
const IdentityKey = "project"

// maxFirstParents bounds the walk from HEAD to the root commit.
const maxFirstParents = 10_000_000

// CheckShadowOwner proves that the existing git directory shadowAbs belongs to the
// project at projectAbs before anything is written into it: its core.worktree, when
// it has one, is the project (symlinks resolved), or else its recorded identity
// (replay.project = git:<root commit>) is the project's; a recorded identity of
// another project is refused even when the work tree matches. A directory without
// a config is not a repository yet and passes (it is created bare). The refusal is
// of kind ErrRefused, names both directories and says what to do; nothing is
// written, whatever the answer.
func CheckShadowOwner(shadowAbs, projectAbs string) error {
	cfgPath := filepath.Join(shadowAbs, "config")
	data, err := runfile.ReadFile(cfgPath, runfile.GitConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg := config.NewConfig()
	if err := cfg.Unmarshal(data); err != nil {
		return fmt.Errorf("%s: the shadow repository's config cannot be parsed (%v); fix or remove it", cfgPath, err)
	}
	recorded := cfg.Raw.Section("replay").Option(IdentityKey)
	worktree := cfg.Raw.Section("core").Option("worktree")
	sameTree := worktree != "" && realDir(worktree) == realDir(projectAbs)
	if recorded == "" && (worktree == "" || sameTree) {
		return nil // bare and unclaimed, or this project's work tree
	}
	if recorded == "" {
		return refuseShadow(shadowAbs, "belongs to another repository: its core.worktree is %s, but the project directory is %s, and it records no project identity (replay.%s); give this project's shadow (or --repo that project)", worktree, projectAbs, IdentityKey)
	}
	id, err := ProjectIdentity(projectAbs)
	switch {
	case err == nil && id == recorded:
		return nil
	case sameTree && err != nil:
		return nil // the project has no commit yet to compare; its work tree is named
	case err != nil:
		return refuseShadow(shadowAbs, "records project %s, and the project directory %s has no commit to prove it is that project (%v)", recorded, projectAbs, err)
	}
	return refuseShadow(shadowAbs, "records project %s, but the project directory %s is %s: it belongs to another project", recorded, projectAbs, id)
}

// ProjectIdentity returns "git:<root commit>" of the repository at projectDir: the
// root commit reached from HEAD by first parents, the same in every clone.
func ProjectIdentity(projectDir string) (string, error) {
	r, err := git.PlainOpen(projectDir) //replay:door the project's own repository, named by the user (--repo or the current directory)
	if err != nil {
		return "", err
	}
	head, err := r.Head()
	if err != nil {
		return "", err
	}
	h := head.Hash()
	for range maxFirstParents {
		c, err := object.GetCommit(r.Storer, h)
		if err != nil {
			return "", err
		}
		if len(c.ParentHashes) == 0 {
			return "git:" + h.String(), nil
		}
		h = c.ParentHashes[0]
	}
	return "", fmt.Errorf("%s: more than %d commits from HEAD to the root", projectDir, maxFirstParents)
}

// recordIdentity sets replay.project in cfg when it is not set and the project has
// a commit; it reports whether cfg changed.
func (s *Store) recordIdentity(cfg *config.Config) bool {
	if cfg.Raw.Section("replay").Option(IdentityKey) != "" {
		return false
	}
	id, err := ProjectIdentity(s.projectDir)
	if err != nil {
		return false // no commit yet: the work tree names the project
	}
	cfg.Raw.Section("replay").SetOption(IdentityKey, id)
	return true
}

// realDir is dir made absolute with its symlinks resolved, the cleaned path when
// it cannot be resolved.
func realDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
