//go:build unix

package cli_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSkillInstallNeverReadsThroughALink plants SKILL.md as a link to a private
// file, to /dev/zero, and as a FIFO (and the replay folder as a link): install,
// with and without --force, refuses (exit 3) naming the file, copies nothing into
// a backup, returns at once and says truthfully that nothing was written.
func TestSkillInstallNeverReadsThroughALink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, s *Sandbox, dir string)
		want  string
	}{
		{"link to a private file", func(t *testing.T, s *Sandbox, dir string) {
			secret := filepath.Join(s.Root, "secret")
			require.NoError(t, os.WriteFile(secret, []byte("PRIVATE KEY\n"), 0o600))
			require.NoError(t, os.Symlink(secret, filepath.Join(dir, "replay", "SKILL.md")))
		}, "is a symbolic link"},
		{"link to /dev/zero", func(t *testing.T, s *Sandbox, dir string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "replay", "SKILL.md")))
		}, "is a symbolic link"},
		{"FIFO", func(t *testing.T, s *Sandbox, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "replay", "SKILL.md"), 0o644))
		}, "FIFO"},
		{"replay folder linked to a private folder", func(t *testing.T, s *Sandbox, dir string) {
			private := filepath.Join(s.Root, "private")
			require.NoError(t, os.MkdirAll(private, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(private, "SKILL.md"), []byte("PRIVATE\n"), 0o600))
			require.NoError(t, os.Remove(filepath.Join(dir, "replay")))
			require.NoError(t, os.Symlink(private, filepath.Join(dir, "replay")))
		}, "is a symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := NewSandbox(t)
			dir := filepath.Join(s.Root, "project", ".claude", "skills")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "replay"), 0o755))
			c.plant(t, s, dir)
			for _, args := range [][]string{
				{"skill", "install", "--dir", dir},
				{"skill", "install", "--dir", dir, "--force", "--now", "2026-04-07T14:52:10Z"},
			} {
				r := s.Run(t, "", args...)
				assert.Equal(t, 3, r.Code, "%v: %s", args, r.Stderr)
				assert.Contains(t, r.Stderr, c.want, args)
				assert.Contains(t, r.Stderr, "nothing was written", args)
				backups, _ := filepath.Glob(filepath.Join(dir, "replay", "SKILL.md.bak-*"))
				assert.Empty(t, backups, "no backup holds what the link led to")
				assert.NoFileExists(t, filepath.Join(dir, "replay", "SKILL.md.bak-1775573530"))
			}
		})
	}
}

// TestSkillInstallRelativeDirFollowsNoLink: a cloned repository whose .claude is
// a link to a private folder; `skill install --dir .claude/skills` run inside
// it refuses (exit 3) and writes nothing where the link leads. The other sides:
// a real .claude gets the skill, and the same folder named by an absolute path
// through the link is the user's own path, followed.
func TestSkillInstallRelativeDirFollowsNoLink(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	repo := filepath.Join(s.Root, "clone")
	private := filepath.Join(s.Root, "private")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	require.NoError(t, os.MkdirAll(private, 0o700))
	require.NoError(t, os.Symlink(private, filepath.Join(repo, ".claude")))

	r := s.Run(t, repo, "skill", "install", "--dir", ".claude/skills")
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "symbolic link")
	assert.Contains(t, r.Stderr, "nothing was written")
	entries, err := os.ReadDir(private)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing is written where the repository's link leads")

	r = s.Run(t, repo, "skill", "install", "--dir", filepath.Join(repo, ".claude", "skills"))
	require.Equal(t, 0, r.Code, "an absolute path is the user's own, followed: %s", r.Stderr)
	assert.FileExists(t, filepath.Join(private, "skills", "replay", "SKILL.md"))

	real := filepath.Join(s.Root, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, ".claude"), 0o755))
	r = s.Run(t, real, "skill", "install", "--dir", ".claude/skills")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.FileExists(t, filepath.Join(real, ".claude", "skills", "replay", "SKILL.md"))
}
