package gitcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// fixture makes, with the git binary, a repository with a merge, an annotated
// tag, an executable, a symlink, a submodule entry, a detached ref and a staged
// change, and returns its directory and a runner.
func fixture(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	bin := testtools.Git(t, "the harness compares with the git binary")
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	env := append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=c", "GIT_COMMITTER_EMAIL=c@x",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	run := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	run("init", "-q", "-b", "main")
	write("a.txt", "a\n", 0o644)
	write("bin/run", "#!/bin/sh\n", 0o755)
	write("deep/er/still/f.go", "package still\n", 0o644)
	require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	run("add", "-A")
	run("update-index", "--add", "--cacheinfo", "160000,0123456789abcdef0123456789abcdef01234567,sub")
	run("commit", "-q", "-m", "one")
	run("tag", "-a", "-m", "v1", "v1")
	run("checkout", "-q", "-b", "side")
	write("side.txt", "side\n", 0o644)
	run("add", "-A")
	run("commit", "-q", "-m", "side")
	run("checkout", "-q", "main")
	write("a.txt", "a2\n", 0o644)
	run("commit", "-q", "-am", "two")
	run("merge", "-q", "--no-edit", "side")
	run("update-ref", "refs/replay/detached", run("rev-parse", "HEAD~1"))
	write("staged.txt", "staged\n", 0o644)
	run("add", "staged.txt")
	return dir, run
}

func checkerFor(t *testing.T) Checker {
	return Checker{Git: testtools.Git(t, "the harness compares with the git binary"), Home: t.TempDir()}
}

// A repository git made passes every check, whether named by its working tree
// or its .git directory, and so does its index.
func TestAgreeingRepositoryPasses(t *testing.T) {
	t.Parallel()
	dir, run := fixture(t)
	c := checkerFor(t)
	require.NoError(t, c.Repo(dir))
	require.NoError(t, c.Repo(filepath.Join(dir, ".git")))
	require.NoError(t, c.Index(dir, filepath.Join(dir, ".git", "index")))
	run("gc", "-q", "--prune=now")
	require.NoError(t, c.Repo(dir), "packed")
	Repo(t, dir)
	Index(t, dir, filepath.Join(dir, ".git", "index"))
}

// Each kind of disagreement is found and shown as a diff naming both sides.
func TestMismatchesAreReportedAsDiffs(t *testing.T) {
	t.Parallel()
	t.Run("fsck", func(t *testing.T) {
		t.Parallel()
		dir, run := fixture(t)
		// A commit without an author line: fsck --strict refuses it.
		tree := run("rev-parse", "HEAD^{tree}")
		c := exec.Command(checkerFor(t).Git, "hash-object", "-t", "commit", "-w", "--literally", "--stdin")
		c.Dir, c.Stdin = dir, strings.NewReader("tree "+tree+"\ncommitter c <c@x> 1 +0000\n\nno author\n")
		out, err := c.Output()
		require.NoError(t, err)
		run("update-ref", "refs/heads/bad", strings.TrimSpace(string(out)))
		err = checkerFor(t).Repo(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "git fsck --strict")
		assert.Contains(t, err.Error(), "missingAuthor")
	})
	t.Run("replaced commit", func(t *testing.T) {
		t.Parallel()
		// git follows refs/replace, go-git does not: the two walks differ.
		dir, run := fixture(t)
		run("replace", "HEAD", "HEAD~1")
		err := checkerFor(t).Repo(dir)
		require.Error(t, err)
		msg := err.Error()
		assert.Contains(t, msg, "commits reachable from the refs")
		assert.Contains(t, msg, "-git    ")
		assert.Contains(t, msg, "+go-git ")
	})
	t.Run("ref name git ignores", func(t *testing.T) {
		t.Parallel()
		dir, run := fixture(t)
		head := run("rev-parse", "HEAD")
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "a..b"), []byte(head+"\n"), 0o644))
		err := checkerFor(t).Repo(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "refs differ")
		assert.Contains(t, err.Error(), "+go-git \"refs/heads/a..b "+head+"\"")
	})
	t.Run("index go-git cannot decode", func(t *testing.T) {
		t.Parallel()
		dir, run := fixture(t)
		run("update-index", "--split-index")
		err := checkerFor(t).Index(dir, filepath.Join(dir, ".git", "index"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "go-git cannot decode the index")
	})
}

func TestDiffShowsOnlyTheDifferingLines(t *testing.T) {
	t.Parallel()
	assert.NoError(t, diff("x", []string{"b", "a", "a"}, []string{"a", "b", "a"}))
	err := diff("refs", []string{"refs/heads/main 1", "same", "twice", "twice"}, []string{"same", "twice", "refs/heads/main 2"})
	require.Error(t, err)
	assert.Equal(t, "refs differ (4 from git, 3 from go-git):\n"+
		"-git    \"refs/heads/main 1\"\n-git    \"twice\"\n+go-git \"refs/heads/main 2\"", err.Error())
	var many []string
	for i := range 25 {
		many = append(many, strings.Repeat("x", i+1))
	}
	err = diff("objects", many, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-git    ... and 5 more")
}

func TestParseDiffTreeRejectsGarbage(t *testing.T) {
	t.Parallel()
	_, err := parseDiffTree([]byte("one two three\n"))
	assert.Error(t, err)
	_, err = parseDiffTree([]byte(":000000 100644 0 1 A\x00path\x00"))
	assert.Error(t, err, "a record before any tree")
	got, err := parseDiffTree([]byte("e t\n:000000 100644 0 1 A\x00a b\nc\x00:000000 160000 0 2 A\x00sub\x00e u\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"t": {"100644 blob 1\ta b\nc", "160000 commit 2\tsub"}, "u": {}}, got)
}
