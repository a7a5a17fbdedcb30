package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	require.NoError(t, c.Run())
	return c.Process.Pid
}

// plantLock creates lock as a killed replay would have left it: the lock file, and
// an intent of process pid naming it (with its identity when same is true, else
// with the identity of another file).
func plantLock(t *testing.T, gitDir, lock string, pid int, same bool) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o755))
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	id := identity(st)
	if !same {
		other, err := os.Stat(gitDir)
		require.NoError(t, err)
		id = identity(other)
	}
	intent := filepath.Join(gitDir, fmt.Sprintf("%s%d-1", intentPrefix, pid))
	require.NoError(t, os.WriteFile(intent, []byte(lock+"\n"+id+"\n"), 0o644))
	// replay writes the lock after recording its intent; a kill mid-write leaves it so.
	require.NoError(t, os.WriteFile(lock, []byte("0123456789abcdef0123"), 0o644))
	return intent
}

func TestStaleLockOfAKilledReplayIsRemoved(t *testing.T) {
	dir, _ := gitRepo(t)
	gd := GitDir(dir)
	old := lockWait
	lockWait = 50 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	lock := filepath.Join(gd, "refs", "replay", "x.lock")

	// A lock a killed replay left (its intent names this very file): taken over.
	intent := plantLock(t, gd, lock, deadPID(t), true)
	require.NoError(t, WriteRef(gd, "refs/replay/x", h))
	assert.NoFileExists(t, lock)
	assert.NoFileExists(t, intent, "the claimed intent is removed")
	matches, _ := filepath.Glob(filepath.Join(gd, intentPrefix+"*"))
	assert.Empty(t, matches, "a finished write leaves no intent behind")

	// The same path, but the file is not the one the dead replay created (git took
	// the lock after replay's was renamed away): never removed.
	intent = plantLock(t, gd, lock, deadPID(t), false)
	var locked *LockedError
	require.ErrorAs(t, WriteRef(gd, "refs/replay/x", h), &locked)
	assert.FileExists(t, lock)
	assert.NoFileExists(t, intent, "an intent naming another's file is dropped")
	require.NoError(t, os.Remove(lock))

	// The inode matches, but the lock changed long after the intent was written: a
	// later file that reuses the inode, never removed.
	intent = plantLock(t, gd, lock, deadPID(t), true)
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(intent, past, past))
	require.ErrorAs(t, WriteRef(gd, "refs/replay/x", h), &locked)
	assert.FileExists(t, lock)
	require.NoError(t, os.Remove(lock))

	// A live process's lock (this test's own pid stands for a running replay): never removed.
	plantLock(t, gd, lock, os.Getpid(), true)
	require.ErrorAs(t, WriteRef(gd, "refs/replay/x", h), &locked)
	assert.FileExists(t, lock)
}

// killedWrite leaves what a replay killed during a write leaves: the staged content
// and the intent of a dead process, and the lock linked when linked is true.
func killedWrite(t *testing.T, gitDir, lock string, linked bool) (staged, intent string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o755))
	s, i, err := stageLock(gitDir, lock, []byte("0123456789abcdef0123\n"))
	require.NoError(t, err)
	name := fmt.Sprintf("%s%d-9", intentPrefix, deadPID(t))
	staged, intent = filepath.Join(gitDir, name+stagedSuffix), filepath.Join(gitDir, name)
	require.NoError(t, os.Rename(s, staged))
	require.NoError(t, os.Rename(i, intent))
	if linked {
		require.NoError(t, os.Link(staged, lock))
	}
	return staged, intent
}

func TestAWriteKilledAtAnyStepIsFinishedByTheNext(t *testing.T) {
	dir, _ := gitRepo(t)
	gd := GitDir(dir)
	old := lockWait
	lockWait = 50 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	lock := filepath.Join(gd, "refs", "replay", "y.lock")
	for _, linked := range []bool{false, true} {
		staged, intent := killedWrite(t, gd, lock, linked)
		require.NoError(t, WriteRef(gd, "refs/replay/y", h), "killed with the lock linked: %v", linked)
		assert.NoFileExists(t, lock)
		assert.NoFileExists(t, staged, "a dead replay's staged content is removed")
		if linked {
			assert.NoFileExists(t, intent, "the claimed intent is removed")
		}
		got, err := os.ReadFile(filepath.Join(gd, "refs", "replay", "y"))
		require.NoError(t, err)
		assert.Equal(t, h.String()+"\n", string(got))
	}
	matches, _ := filepath.Glob(filepath.Join(gd, intentPrefix+"*"))
	assert.Empty(t, matches, "nothing of the killed writes or of this one is left")
}
