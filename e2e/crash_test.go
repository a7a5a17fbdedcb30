package e2e

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crashRounds is how many kill -9 rounds each crash test runs: one by default (a
// kill at a random point, then the recovery), many under REPLAY_STRESS.
func crashRounds() int {
	if os.Getenv("REPLAY_STRESS") != "" {
		return 40
	}
	return 1
}

// crashProject is a project big enough that a checkpoint or a restore takes a
// while, so a kill lands at different steps. It is built once (1,500 files and a
// git commit made with the git binary) and copied into each test's sandbox.
func crashProject(t *testing.T, s *Sandbox) (dir string, flags []string) {
	t.Helper()
	dir = filepath.Join(s.Root, "project")
	require.NoError(t, copyDirTree(crashTemplate(t), dir))
	return dir, []string{"--repo", dir, "--shadow", filepath.Join(s.Root, "shadow"), "--now", "2026-04-07T15:00:00Z"}
}

// crashTmpl is the crash tests' project, built by the first test that needs it.
var crashTmpl struct {
	sync.Mutex
	dir string
}

// crashTemplate returns the crash tests' project, building it beside the binary
// on first use (again after a failed build).
func crashTemplate(t *testing.T) string {
	t.Helper()
	crashTmpl.Lock()
	defer crashTmpl.Unlock()
	if crashTmpl.dir != "" {
		return crashTmpl.dir
	}
	root := filepath.Join(filepath.Dir(binPath), "crash-template")
	require.NoError(t, os.RemoveAll(root))
	s := &Sandbox{Root: root, Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{s.Home, s.Tmp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	dir, _ := cpProject(t, s)
	for i := 0; i < 1500; i++ {
		writeFile(t, dir, fmt.Sprintf("src/pkg%02d/file%04d.go", i/100, i), fmt.Sprintf("package p // %d\n%s\n", i, strings.Repeat("x", i%200)), 0o644)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "assets"), 0o755))
	writeBig(t, filepath.Join(dir, "assets", "big.bin"), 8<<20, false)
	s.GitOut(t, dir, "add", "-A")
	s.GitOut(t, dir, "commit", "-q", "-m", "many files")
	crashTmpl.dir = dir
	return dir
}

// churn edits, adds and deletes files and stages some of it: round r's changes.
func churn(t *testing.T, s *Sandbox, dir string, r int) {
	t.Helper()
	for i := r % 7; i < 1500; i += 7 {
		p := filepath.Join(dir, fmt.Sprintf("src/pkg%02d/file%04d.go", i/100, i))
		switch i % 3 {
		case 0:
			os.Remove(p)
		default:
			writeFile(t, dir, fmt.Sprintf("src/pkg%02d/file%04d.go", i/100, i), fmt.Sprintf("package p // %d round %d\n", i, r), 0o644)
		}
	}
	writeFile(t, dir, fmt.Sprintf("new/round%d.txt", r), "added\n", 0o644)
	s.GitOut(t, dir, "add", "new")
	writeBig(t, filepath.Join(dir, "assets", "big.bin"), int64(4+r%5)<<20, false)
}

var gitLockFile = regexp.MustCompile(`\((/\S+\.lock) exists\)`)

// runAfterCrash runs replay after a kill; when the kill left one of git's lock files
// behind (as a killed git would), the error names it, and the test removes it as
// the message says and runs again.
func runAfterCrash(t *testing.T, s *Sandbox, dir string, args ...string) (Result, int) {
	t.Helper()
	removed := 0
	for {
		r := s.Run(t, dir, args...)
		m := gitLockFile.FindStringSubmatch(r.Stderr)
		if r.Code == 0 || m == nil || removed > 3 {
			return r, removed
		}
		require.Contains(t, r.Stderr, "another git process is writing")
		require.NoError(t, os.Remove(m[1]))
		removed++
	}
}

// killAt starts replay with args and sends SIGKILL after delay (or lets it finish).
func killAt(t *testing.T, s *Sandbox, dir string, delay time.Duration, args ...string) bool {
	t.Helper()
	cmd := s.Command(dir, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, out.String())
		return false
	case <-time.After(delay):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return true
	}
}

// assertConsistent checks the shadow repository and the project with git fsck and
// git status, and that replay can list the checkpoints.
func assertConsistent(t *testing.T, s *Sandbox, dir string, flags []string) {
	t.Helper()
	shadow := flags[3]
	if _, err := os.Stat(filepath.Join(shadow, "HEAD")); err == nil {
		out, err := gitCombined(s, dir, "--git-dir="+shadow, "fsck", "--no-dangling")
		require.NoError(t, err, "shadow repository: %s", out)
		r := s.Run(t, dir, append([]string{"checkpoint", "list"}, flags[:4]...)...)
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	out, err := gitCombined(s, dir, "fsck", "--no-dangling")
	require.NoError(t, err, "project repository: %s", out)
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err != nil {
		out, err = gitCombined(s, dir, "status", "--porcelain")
		require.NoError(t, err, "project index: %s", out)
	}
}

func gitCombined(s *Sandbox, dir string, args ...string) (string, error) {
	cmd := s.Git(args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// timed runs replay once to completion and returns how long it took.
func timed(t *testing.T, s *Sandbox, dir string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	r := s.Run(t, dir, args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	return time.Since(start)
}

// TestKilledCheckpointCreateRecovers kills `checkpoint create` at random points:
// the shadow repository stays consistent and the next create succeeds and matches
// the working tree.
func TestKilledCheckpointCreateRecovers(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir, flags := crashProject(t, s)
	full := timed(t, s, dir, append([]string{"checkpoint", "create", "--reason", "base"}, flags...)...)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	killed, locks := 0, 0
	for r := 1; r <= crashRounds(); r++ {
		churn(t, s, dir, r)
		delay := time.Duration(rng.Int63n(int64(full) + 1))
		args := append([]string{"checkpoint", "create", "--reason", fmt.Sprintf("round-%d", r)}, flags...)
		if killAt(t, s, dir, delay, args...) {
			killed++
		}
		assertConsistent(t, s, dir, flags)
		res, n := runAfterCrash(t, s, dir, args...)
		locks += n
		require.Equal(t, 0, res.Code, "round %d: create after the kill: %s", r, res.Stderr)
		again := s.Run(t, dir, args...)
		require.Equal(t, 0, again.Code, again.Stderr)
		assert.Contains(t, again.Stdout, "Working tree unchanged", "round %d: the newest checkpoint is the working tree", r)
	}
	t.Logf("%d rounds, %d killed mid-run (full run %s), %d stale git lock files removed", crashRounds(), killed, full, locks)
}

// TestKilledRestoreRecovers kills `checkpoint restore` at random points: both
// repositories stay consistent, and running the restore again brings the tree to
// the checkpoint.
func TestKilledRestoreRecovers(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir, flags := crashProject(t, s)
	r := s.Run(t, dir, append([]string{"checkpoint", "create", "--reason", "base"}, flags...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	restore := append([]string{"checkpoint", "restore", "base", "--yes"}, flags...)
	churn(t, s, dir, 0)
	full := timed(t, s, dir, restore...)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	killed, locks := 0, 0
	for round := 1; round <= crashRounds(); round++ {
		churn(t, s, dir, round)
		if killAt(t, s, dir, time.Duration(rng.Int63n(int64(full)+1)), restore...) {
			killed++
		}
		assertConsistent(t, s, dir, flags)
		res, n := runAfterCrash(t, s, dir, restore...)
		locks += n
		require.Equal(t, 0, res.Code, "round %d: restore after the kill: %s", round, res.Stderr)
		assert.NoFileExists(t, filepath.Join(dir, "new", fmt.Sprintf("round%d.txt", round)))
		out, err := gitCombined(s, dir, "status", "--porcelain")
		require.NoError(t, err, out)
		assert.Empty(t, out, "round %d: the tree, index and branch are the checkpoint's", round)
	}
	t.Logf("%d rounds, %d killed mid-run (full run %s), %d stale git lock files removed", crashRounds(), killed, full, locks)
}
