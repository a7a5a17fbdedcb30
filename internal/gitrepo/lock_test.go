package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// gitRepo makes a repository with the git binary (the reference) holding one commit,
// with a hermetic environment, and returns its directory and a command builder.
func gitRepo(t *testing.T) (string, func(args ...string) *exec.Cmd) {
	t.Helper()
	testtools.Git(t, "the git binary is needed as the reference")
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	env := append(os.Environ(), "HOME="+root, "XDG_CONFIG_HOME="+root, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, env
		return c
	}
	for i := 0; i < 20; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte("v0\n"), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		out, err := cmd(args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return dir, cmd
}

func TestWriteRefWaitsForALockThenNamesIt(t *testing.T) {
	dir, cmd := gitRepo(t)
	gd := GitDir(dir)
	old := lockWait
	lockWait = 50 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	lock := filepath.Join(gd, "refs", "replay", "x.lock")
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o755))
	require.NoError(t, os.WriteFile(lock, nil, 0o644))

	err := WriteRef(gd, "refs/replay/x", h)
	var locked *LockedError
	require.ErrorAs(t, err, &locked)
	assert.Contains(t, err.Error(), "another git process is writing refs/replay/x ("+lock+" exists)")
	assert.NoFileExists(t, filepath.Join(gd, "refs", "replay", "x"))
	assert.FileExists(t, lock, "another process's lock is never removed")

	// A lock released while we wait is taken.
	go func() { time.Sleep(10 * time.Millisecond); os.Remove(lock) }()
	lockWait = 5 * time.Second
	require.NoError(t, WriteRef(gd, "refs/replay/x", h))
	assert.NoFileExists(t, lock)

	require.NoError(t, os.WriteFile(filepath.Join(gd, "index.lock"), nil, 0o644))
	lockWait = 50 * time.Millisecond
	err = WriteIndex(gd, &index.Index{Version: 2})
	require.ErrorAs(t, err, &locked)
	assert.Contains(t, err.Error(), "another git process is writing the index")
	require.NoError(t, os.Remove(filepath.Join(gd, "index.lock")))

	// The git binary sees replay's locks: while replay holds them, git is refused.
	holdLock(t, gd, filepath.Join(gd, "refs", "replay", "x.lock"))
	out, err := cmd("-c", "core.filesRefLockTimeout=0", "update-ref", "refs/replay/x", "HEAD").CombinedOutput()
	assert.Error(t, err)
	assert.Regexp(t, gitLockMessage, string(out))
	holdLock(t, gd, filepath.Join(gd, "index.lock"))
	out, err = cmd("add", "f00.txt").CombinedOutput()
	assert.Error(t, err)
	assert.Regexp(t, gitLockMessage, string(out))
}

// holdLock takes git's lock at lock the way replay does (staged content, intent,
// link) and leaves it held.
func holdLock(t *testing.T, gitDir, lock string) {
	t.Helper()
	staged, _, err := stageLock(gitDir, lock, []byte("held\n"))
	require.NoError(t, err)
	require.NoError(t, linkLock(staged, lock, "test", nil))
}

var gitLockMessage = regexp.MustCompile(`(?i)(cannot lock ref|unable to create .*\.lock|\.lock': File exists|Another git process)`)

// TestRefWritesAgainstARealGit runs git update-ref in a loop while WriteRef writes the
// same ref: every write on either side succeeds or reports the lock, and the ref is
// always a whole hash.
func TestRefWritesAgainstARealGit(t *testing.T) {
	t.Parallel() // touches no package variable; the tests that set lockWait run before
	dir, cmd := gitRepo(t)
	gd := GitDir(dir)
	headOut, err := cmd("rev-parse", "HEAD").Output()
	require.NoError(t, err)
	head := strings.TrimSpace(string(headOut))
	ours := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	const rounds = 60
	var (
		wg                  sync.WaitGroup
		gitOK, gitLocked    int
		oursOK, oursLocked  int
		gitOther, oursOther []string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			out, err := cmd("update-ref", "refs/replay/shared", head).CombinedOutput()
			switch {
			case err == nil:
				gitOK++
			case gitLockMessage.Match(out):
				gitLocked++
			default:
				gitOther = append(gitOther, string(out))
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds*5; i++ {
			err := WriteRef(gd, "refs/replay/shared", ours)
			var locked *LockedError
			switch {
			case err == nil:
				oursOK++
			case errors.As(err, &locked):
				oursLocked++
			default:
				oursOther = append(oursOther, err.Error())
			}
			data, rerr := os.ReadFile(filepath.Join(gd, "refs", "replay", "shared"))
			if rerr == nil && !regexp.MustCompile(`^[0-9a-f]{40}\n$`).Match(data) {
				oursOther = append(oursOther, fmt.Sprintf("torn ref %q", data))
			}
		}
	}()
	wg.Wait()
	assert.Empty(t, gitOther, "git failed for another reason than the lock")
	assert.Empty(t, oursOther, "replay failed for another reason than the lock, or saw a torn ref")
	assert.Positive(t, gitOK)
	assert.Positive(t, oursOK)
	t.Logf("git: %d written, %d locked out; replay: %d written, %d locked out", gitOK, gitLocked, oursOK, oursLocked)
	out, err := cmd("rev-parse", "--verify", "refs/replay/shared").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.NoFileExists(t, filepath.Join(gd, "refs", "replay", "shared.lock"))
}

// TestIndexWritesAgainstARealGit runs git add in a loop while WriteIndex writes the
// index: each side succeeds or reports the lock, and the index always parses.
func TestIndexWritesAgainstARealGit(t *testing.T) {
	t.Parallel() // touches no package variable; the tests that set lockWait run before
	dir, cmd := gitRepo(t)
	gd := GitDir(dir)
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	idx, err := repo.Storer.Index()
	require.NoError(t, err)
	const rounds = 40
	var (
		wg                  sync.WaitGroup
		gitOK, oursOK       int
		gitOther, oursOther []string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			name := fmt.Sprintf("f%02d.txt", i%20)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("v%d\n", i)), 0o644); err != nil {
				gitOther = append(gitOther, err.Error())
				continue
			}
			out, err := cmd("add", name).CombinedOutput()
			switch {
			case err == nil:
				gitOK++
			case !gitLockMessage.Match(out):
				gitOther = append(gitOther, string(out))
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds*3; i++ {
			err := WriteIndex(gd, idx)
			var locked *LockedError
			switch {
			case err == nil:
				oursOK++
			case !errors.As(err, &locked):
				oursOther = append(oursOther, err.Error())
			}
			if err := decodeIndex(filepath.Join(gd, "index")); err != nil {
				oursOther = append(oursOther, "torn index: "+err.Error())
			}
		}
	}()
	wg.Wait()
	assert.Empty(t, gitOther)
	assert.Empty(t, oursOther)
	assert.Positive(t, gitOK)
	assert.Positive(t, oursOK)
	out, err := cmd("status", "--porcelain").CombinedOutput()
	require.NoError(t, err, string(out))
	gitcheck.Repo(t, dir)
	gitcheck.Index(t, dir, filepath.Join(gd, "index"))
	assert.NoFileExists(t, filepath.Join(gd, "index.lock"))
}

func decodeIndex(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return index.NewDecoder(f).Decode(&index.Index{})
}
