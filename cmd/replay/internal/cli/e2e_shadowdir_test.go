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
		}, "inside the git directory"},
		{"git dir of a work tree", func(t *testing.T, s *Sandbox, p *fixture.Pipeline) string {
			victim := victimRepo(t, s, p)
			require.NoError(t, os.RemoveAll(p.Shadow))
			out, err := s.Git("-C", victim, "init", "-q", "--separate-git-dir", p.Shadow).CombinedOutput()
			require.NoError(t, err, string(out))
			return victim
		}, "belong to a work tree"},
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
				assert.Contains(t, r.Stderr, c.want, args)
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
