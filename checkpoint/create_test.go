package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

func TestOpenWithoutShadow(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	_, err := Open(p.shadow, p.dir)
	require.ErrorIs(t, err, ErrNoShadow)
	_, statErr := os.Stat(p.shadow)
	assert.True(t, os.IsNotExist(statErr), "Open must not create the shadow directory")
}

func TestOpenOrInitWritesNothingIntoTheProject(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	before := p.state()
	s := p.store()
	assert.Equal(t, before, p.state())
	cfg, err := s.storage.Config()
	require.NoError(t, err)
	assert.Equal(t, p.dir, cfg.Core.Worktree)
	assert.Equal(t, "0", cfg.Raw.Section("gc").Option("auto"))
	head, err := s.storage.Reference("HEAD")
	require.NoError(t, err)
	assert.Equal(t, DefaultBranch, head.Target())
}

func TestCreateSnapshotsTheWorkingTree(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.write("untracked.txt", "not committed\n")
	p.write("sub/.gitignore", "*.tmp\n!keep.tmp\n")
	p.write("sub/x.tmp", "ignored by a nested .gitignore\n")
	p.write("sub/keep.tmp", "re-included\n")
	p.write("secret.txt", "excluded by info/exclude\n")
	require.NoError(t, os.MkdirAll(filepath.Join(p.dir, ".git", "info"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, ".git", "info", "exclude"), []byte("secret.txt\n"), 0o644))
	s := p.store()

	cp, created, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	assert.Equal(t, "pre-wave-1", cp.Reason)
	assert.Equal(t, "build", cp.Source)
	assert.Equal(t, base.Add(time.Hour), cp.Time)
	assert.Equal(t, p.head(), cp.ProjectHead)

	files, err := s.objects.readTreeFiles(cp.Tree)
	require.NoError(t, err)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	assert.ElementsMatch(t, []string{".gitignore", "README.md", "docs", "run.sh", "src/app.go", "src/deep/util.go", "untracked.txt", "sub/.gitignore", "sub/keep.tmp"}, names)
	assert.Equal(t, filemode.Executable, files["run.sh"].Mode)
	assert.Equal(t, filemode.Symlink, files["docs"].Mode)

	c, err := s.repo.CommitObject(cp.Hash)
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1 | 2026-04-07T15:00:00Z | build\n\nProject-Head: "+p.head().String()+"\n", c.Message)
	assert.Equal(t, base.Add(time.Hour), c.Author.When.UTC())

	data, err := os.ReadFile(paths.CheckpointManifest(p.shadow))
	require.NoError(t, err)
	assert.Contains(t, string(data), "| "+cp.Short+" | 2026-04-07 15:00:00 | pre-wave-1 | build |")

	again, created, err := s.Create(CreateOptions{Reason: "pre-wave-2", Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.False(t, created, "an unchanged tree makes no checkpoint")
	assert.Equal(t, cp.Hash, again.Hash)
}

// TestTreeMatchesGit checks our tree hash against the git binary's for the same files.
func TestTreeMatchesGit(t *testing.T) {
	t.Parallel()
	testtools.Git(t, "git binary not installed")
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	gitDir := filepath.Join(p.root, "gitshadow")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + p.dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+p.root)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", "-A")
	assert.Equal(t, cp.Tree.String(), run("write-tree"))
	gitcheck.Repo(t, p.shadow)
}

func TestCreateRejectsBadReasons(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	for _, reason := range []string{"", "  ", "a | b", "two\nlines"} {
		_, _, err := s.Create(CreateOptions{Reason: reason})
		assert.Error(t, err, "reason %q", reason)
	}
}

func TestCacheSeesChangesOfTheSameSize(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	first, _, err := s.Create(CreateOptions{Reason: "a", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("README.md", "# PROJECT\n") // same size, same second
	second, created, err := s.Create(CreateOptions{Reason: "b", Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	assert.NotEqual(t, first.Tree, second.Tree)
}

func TestManifestKeepsFiftyRows(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	for i := 0; i < ManifestRows+5; i++ {
		p.write("counter.txt", strings.Repeat("x", i+1))
		_, created, err := s.Create(CreateOptions{Reason: "pre-debug-step", Now: clockAt(time.Duration(i) * time.Minute)})
		require.NoError(t, err)
		require.True(t, created)
	}
	data, err := os.ReadFile(paths.CheckpointManifest(p.shadow))
	require.NoError(t, err)
	assert.Len(t, parseManifest(data), ManifestRows)
	cps, warnings, err := s.List()
	require.NoError(t, err)
	assert.Len(t, cps, ManifestRows+5)
	assert.Empty(t, warnings, "a manifest truncated to its last 50 rows is normal")
	assert.False(t, cps[0].InManifest)
	assert.True(t, cps[len(cps)-1].InManifest)
}
