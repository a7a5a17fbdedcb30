package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/fixture"
)

// TestRunDirectoriesRefusePlantedLinks plants, in a received scratch dir, a symbolic
// link (or a file) where replay creates a directory of its own: the A/B worktrees
// folder, one A/B session's worktree, its responses folder beside it, the forks
// folder. Every command that would create it (an A/B replay, replicas, a fork)
// refuses with a one-line error naming the path, and writes nothing through it.
func TestRunDirectoriesRefusePlantedLinks(t *testing.T) {
	t.Parallel()
	session := func(p *fixture.Pipeline) string { return strconv.FormatInt(p.Now.Unix(), 10) }
	abArgs := func(t *testing.T, p *fixture.Pipeline) []string {
		return []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + stricter(t, p, "stricter.md"), "--templates", p.Templates,
			"--yes", "--agent", "builtin:sim", "--now", now(p)}
	}
	for _, c := range []struct {
		name  string
		at    func(p *fixture.Pipeline) string // where the link is planted
		file  bool                             // plant a regular file instead of a link
		args  func(t *testing.T, p *fixture.Pipeline) []string
		inErr string
	}{
		{"A/B worktrees folder", func(p *fixture.Pipeline) string { return filepath.Join(p.Scratch, ab.WorktreesDir) }, false, abArgs, "is a symbolic link"},
		{"A/B worktrees folder is a file", func(p *fixture.Pipeline) string { return filepath.Join(p.Scratch, ab.WorktreesDir) }, true, abArgs, "is not a directory"},
		{"A/B session worktree", func(p *fixture.Pipeline) string {
			return filepath.Join(p.Scratch, ab.WorktreesDir, session(p))
		}, false, abArgs, "is a symbolic link"},
		{"A/B responses folder", func(p *fixture.Pipeline) string {
			return filepath.Join(p.Scratch, ab.WorktreesDir, session(p)+".ab")
		}, false, abArgs, "is a symbolic link"},
		{"replicas' worktrees folder", func(p *fixture.Pipeline) string { return filepath.Join(p.Scratch, ab.WorktreesDir) }, false,
			func(t *testing.T, p *fixture.Pipeline) []string { return replicasArgs(t, p, "--replicas", "1") }, "is a symbolic link"},
		{"forks folder", func(p *fixture.Pipeline) string { return filepath.Join(p.Scratch, fork.ForksDir) }, false,
			func(t *testing.T, p *fixture.Pipeline) []string {
				return []string{"fork", p.Scratch, "--at", "15", "--now", now(p)}
			}, "is a symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			outside := filepath.Join(p.Root, "outside")
			require.NoError(t, os.Mkdir(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep me\n"), 0o644))
			at := c.at(p)
			require.NoError(t, os.MkdirAll(filepath.Dir(at), 0o755))
			if c.file {
				require.NoError(t, os.WriteFile(at, []byte("not a directory\n"), 0o644))
			} else {
				require.NoError(t, os.Symlink(outside, at))
			}
			before := captureUserState(t, p)

			r := runGuarded(t, s, p.Project, c.args(t, p)...)
			assert.NotEqual(t, 0, r.Code, r.Stdout)
			assert.Contains(t, r.Stderr, at+" "+c.inErr, r.Stderr)
			assertNoPanic(t, r)
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing written through the link")
			assertUntouched(t, p, before)
		})
	}
}
