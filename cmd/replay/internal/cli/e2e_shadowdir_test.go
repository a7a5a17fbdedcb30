package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// victimRepo makes a git repository with one commit beside the fixture's project.
func victimRepo(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
	t.Helper()
	victim := filepath.Join(p.Root, "victim")
	writeFile(t, victim, "README.md", "the victim's own file\n", 0o644)
	for _, args := range [][]string{
		{"init", "-q", "-b", "trunk", victim},
		{"-C", victim, "add", "-A"},
		{"-C", victim, "-c", "user.name=V", "-c", "user.email=v@example.com", "commit", "-qm", "victim"},
	} {
		out, err := s.Git(args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return victim
}

// foreignGitDir makes a victim repository whose git directory lives in dir under
// the shadow's name, with an absolute core.worktree naming the victim's tree: what a
// run or store plants to have replay commit into another repository.
func foreignGitDir(t *testing.T, s *Sandbox, p *fixture.Pipeline, dir string) string {
	t.Helper()
	victim := victimRepo(t, s, p)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gd := filepath.Join(dir, filepath.Base(p.Shadow))
	require.NoError(t, os.Rename(filepath.Join(victim, ".git"), gd))
	out, err := s.Git("--git-dir", gd, "config", "core.worktree", victim).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.WriteFile(filepath.Join(victim, ".git"), []byte("gitdir: "+gd+"\n"), 0o644))
	return victim
}

// gitState is what a shadow aimed at a repository's .git would move: its HEAD's
// ref, its branches and its index.
func gitState(t *testing.T, s *Sandbox, dir string) string {
	t.Helper()
	out, err := s.Git("-C", dir, "for-each-ref", "--format=%(refname) %(objectname)").CombinedOutput()
	require.NoError(t, err, string(out))
	gd, err := s.Git("-C", dir, "rev-parse", "--absolute-git-dir").Output()
	require.NoError(t, err)
	idx, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(gd)), "index"))
	require.NoError(t, err)
	return string(out) + "\n" + digestBytes(idx)
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestShadowDirIsARealDirectoryOfThisProject plants the shadow checkpoint directory
// where it would write into a repository's .git: a symlink to another repository's
// .git, to the project's own .git, a parent folder linked into a .git, and a real
// directory that is the git dir of a work tree. checkpoint create, checkpoint
// restore and resume each refuse (exit 3) naming the directory, and neither
// repository's refs or index change; a real shadow directory still works.
func TestShadowDirIsARealDirectoryOfThisProject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, s *Sandbox, p *fixture.Pipeline) (guarded string)
		want  string
	}{
		{"symlink to another repository's .git", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			victim := victimRepo(t, s, p)
			require.NoError(t, os.RemoveAll(p.Shadow))
			require.NoError(t, os.Symlink(filepath.Join(victim, ".git"), p.Shadow))
			return victim
		}, "is a symbolic link"},
		{"symlink to the project's own .git", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			require.NoError(t, os.RemoveAll(p.Shadow))
			require.NoError(t, os.Symlink(filepath.Join(p.Project, ".git"), p.Shadow))
			return p.Project
		}, "is a symbolic link"},
		{"parent folder linked into a .git", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			victim := victimRepo(t, s, p)
			parent := filepath.Dir(p.Shadow)
			inside := filepath.Join(victim, ".git", "x")
			require.NoError(t, os.MkdirAll(inside, 0o755))
			require.NoError(t, os.Rename(p.Shadow, filepath.Join(inside, filepath.Base(p.Shadow))))
			require.NoError(t, os.RemoveAll(parent))
			require.NoError(t, os.Symlink(inside, parent))
			return victim
		}, "inside the git directory|reached through .*, a symbolic link"},
		{"git dir of a work tree", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			victim := victimRepo(t, s, p)
			require.NoError(t, os.RemoveAll(p.Shadow))
			out, err := s.Git("-C", victim, "init", "-q", "--separate-git-dir", p.Shadow).CombinedOutput()
			require.NoError(t, err, string(out))
			return victim
		}, "belong to a work tree"},
		{"checkpoints folder linked to another repository's git dir with an absolute core.worktree", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			victim := foreignGitDir(t, s, p, filepath.Join(p.Root, "elsewhere"))
			checkpoints := filepath.Dir(p.Shadow)
			require.NoError(t, os.RemoveAll(checkpoints))
			require.NoError(t, os.Symlink(filepath.Join(p.Root, "elsewhere"), checkpoints))
			return victim
		}, "reached through .*, a symbolic link|core.worktree is"},
		{"another repository's git dir with an absolute core.worktree in the shadow's place", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			require.NoError(t, os.RemoveAll(p.Shadow))
			return foreignGitDir(t, s, p, filepath.Dir(p.Shadow))
		}, "core.worktree is"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			guarded := c.plant(t, s, p)
			before, project := gitState(t, s, guarded), gitState(t, s, p.Project)
			for _, args := range [][]string{
				{"checkpoint", "create", "--reason", "pre-wave-9", "--now", now(p)},
				{"checkpoint", "restore", "pre-wave-2", "--yes", "--now", now(p)},
				{p.Scratch, "--yes", "--now", now(p)},
			} {
				r := runGuarded(t, s, p.Project, args...)
				assert.Equal(t, 3, r.Code, "%v\n%s", args, r.Stderr)
				assert.Regexp(t, c.want, r.Stderr, args)
				assert.Contains(t, r.Stderr, p.Shadow, args)
				assertNoPanic(t, r)
			}
			assert.Equal(t, before, gitState(t, s, guarded), "the repository's refs and index are untouched")
			assert.Equal(t, project, gitState(t, s, p.Project), "the project's refs and index are untouched")
		})
	}
	t.Run("a real shadow directory is let through", func(t *testing.T) {
		t.Parallel()
		s, p := pipelineSandbox(t)
		r := runGuarded(t, s, p.Project, "checkpoint", "create", "--reason", "pre-wave-9", "--now", now(p))
		assert.Equal(t, 0, r.Code, r.Stderr)
	})
}
