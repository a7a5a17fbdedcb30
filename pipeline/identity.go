package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/runfile"
)

// maxFirstParents bounds the walk from HEAD to the root commit.
const maxFirstParents = 10_000_000

// RootCommit returns the root commit of dir's repository reached from HEAD by
// first parents: the project's identity, the same in every clone at any path.
func RootCommit(dir string) (plumbing.Hash, error) {
	r, err := git.PlainOpen(dir) //replay:door the project's own repository, named by the user (--repo or the current directory)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	head, err := r.Head()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h := head.Hash()
	for range maxFirstParents {
		c, err := object.GetCommit(r.Storer, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if len(c.ParentHashes) == 0 {
			return h, nil
		}
		h = c.ParentHashes[0]
	}
	return plumbing.ZeroHash, fmt.Errorf("%s: more than %d commits from HEAD to the root", dir, maxFirstParents)
}

// SameProjectIdentity reports whether the shadow repository at shadowDir
// belongs to the project at projectDir by identity rather than by path: its
// config records replay.project = git:<root commit> (replay pull writes it)
// and that is projectDir's root commit. A run pulled at one path is then used
// from a clone at another; note says so. The shadow's own path and
// core.worktree are never followed: replay writes only into projectDir.
func SameProjectIdentity(shadowDir, projectDir string) (note string, ok bool) {
	data, err := runfile.ReadFile(filepath.Join(shadowDir, "config"), runfile.GitConfig)
	if err != nil {
		return "", false
	}
	cfg := config.NewConfig()
	if cfg.Unmarshal(data) != nil {
		return "", false
	}
	id := cfg.Raw.Section("replay").Option("project")
	root, err := RootCommit(projectDir)
	if err != nil || id != "git:"+root.String() {
		return "", false
	}
	return fmt.Sprintf("note: the shadow repository %s was made for the project at another path; %s is the same project (root commit %s), so replay uses it from here and restores only into %s",
		shadowDir, projectDir, root.String()[:12], projectDir), true
}

// GuardShadowProject is the project guard of every command that uses a shadow
// repository: CheckShadowProject's refusal of a shadow that belongs to another
// directory, except a shadow of the same project at another path
// (SameProjectIdentity), which is accepted with note to show the user.
func GuardShadowProject(shadowDir, projectDir string) (note string, err error) {
	err = CheckShadowProject(shadowDir, projectDir)
	if err == nil {
		return "", nil
	}
	if note, ok := SameProjectIdentity(shadowDir, projectDir); ok {
		return note, nil // another path, the same project (a pulled run used from a clone)
	}
	return "", err
}
