package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// victimGitDir makes another project whose git directory is moved to gitDir with
// an absolute core.worktree naming its tree, and returns that project and its
// branch's commit.
func victimGitDir(t *testing.T, gitDir string) (*testProject, plumbing.Hash) {
	t.Helper()
	v := newTestProject(t)
	v.write("victim.txt", "the victim's own file\n")
	h := v.commit("victim", base.Add(time.Minute))
	require.NoError(t, os.MkdirAll(filepath.Dir(gitDir), 0o755))
	require.NoError(t, os.Rename(filepath.Join(v.dir, ".git"), gitDir))
	r, err := git.PlainOpen(gitDir)
	require.NoError(t, err)
	cfg, err := r.Config()
	require.NoError(t, err)
	cfg.Core.Worktree = v.dir
	require.NoError(t, r.SetConfig(cfg))
	return v, h
}

// branchOf reads the commit branch feat/login of the git directory gitDir points at.
func branchOf(t *testing.T, gitDir string) plumbing.Hash {
	t.Helper()
	r, err := git.PlainOpen(gitDir)
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("feat/login"), true)
	require.NoError(t, err)
	return ref.Hash()
}

// OpenOrInit, the way every checkpoint is created, proves the shadow is this
// project's before it writes: a checkpoints folder that is a link, a foreign git
// directory with an absolute core.worktree, and a shadow recording another
// project's identity are refused (ErrRefused) and the other repository's branch
// does not move; this project's own shadow, and one it made at another path
// (same recorded identity), are let through.
func TestOpenOrInitProvesTheShadowIsThisProjects(t *testing.T) {
	t.Parallel()
	t.Run("checkpoints folder linked to a foreign git dir", func(t *testing.T) {
		t.Parallel()
		p := newTestProject(t)
		elsewhere := filepath.Join(p.root, "elsewhere")
		_, want := victimGitDir(t, filepath.Join(elsewhere, "h"))
		layout := filepath.Join(p.root, "home", "projects", "h", "checkpoints", "h")
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Dir(layout)), 0o755))
		require.NoError(t, os.Symlink(elsewhere, filepath.Dir(layout)))
		_, err := openOrInit(layout, p.dir)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrRefused)
		assert.Contains(t, err.Error(), "a symbolic link")
		assert.Equal(t, want, branchOf(t, filepath.Join(elsewhere, "h")))
	})
	t.Run("foreign git dir with an absolute core.worktree", func(t *testing.T) {
		t.Parallel()
		p := newTestProject(t)
		_, want := victimGitDir(t, p.shadow)
		_, err := openOrInit(p.shadow, p.dir)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrRefused)
		assert.Contains(t, err.Error(), "its core.worktree is")
		assert.Equal(t, want, branchOf(t, p.shadow))
	})
	t.Run("another project's recorded identity, even with this work tree", func(t *testing.T) {
		t.Parallel()
		p := newTestProject(t)
		s := p.store()
		_, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
		require.NoError(t, err)
		cfg, err := s.storage.Config()
		require.NoError(t, err)
		id := cfg.Raw.Section("replay").Option(IdentityKey)
		require.Equal(t, "git:"+p.head().String(), id, "creating the shadow recorded the project's identity")
		cfg.Raw.Section("replay").SetOption(IdentityKey, "git:"+plumbing.ZeroHash.String())
		require.NoError(t, s.storage.SetConfig(cfg))
		_, err = openOrInit(p.shadow, p.dir)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrRefused)
		assert.Contains(t, err.Error(), "belongs to another project")
	})
	t.Run("the same project at another path", func(t *testing.T) {
		t.Parallel()
		p := newTestProject(t)
		s := p.store()
		_, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
		require.NoError(t, err)
		clone := filepath.Join(p.root, "clone")
		require.NoError(t, os.Rename(p.dir, clone))
		_, err = openOrInit(p.shadow, clone)
		assert.NoError(t, err)
	})
}
