package checkpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/safewrite"
)

func TestLockSerialisesReplayProcesses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shadow")
	first, err := AcquireLock(dir, time.Second)
	require.NoError(t, err)
	assert.False(t, first.Waited)
	data, err := os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(data), "the holder's pid is recorded")

	// flock locks belong to the open file, so a second open in this process competes
	// exactly as another process would.
	start := time.Now()
	_, err = AcquireLock(dir, 150*time.Millisecond)
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "it waits before giving up")
	assert.Equal(t, os.Getpid(), busy.PID)
	assert.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), "another replay is running (pid "+strconv.Itoa(os.Getpid())+")")

	go func() { time.Sleep(100 * time.Millisecond); first.Release() }()
	second, err := AcquireLock(dir, 5*time.Second)
	require.NoError(t, err, "a lock released while waiting is taken")
	assert.True(t, second.Waited)
	second.Release()
	second.Release() // twice is harmless
	var none *Lock
	none.Release()
	assert.NoFileExists(t, filepath.Join(dir, LockFile), "a released lock leaves nothing behind")

	// Uncontended (above, the waiting second lock may recreate the file before the
	// first removes the directory it made, and then the directory stays).
	alone := filepath.Join(t.TempDir(), "shadow")
	l, err := AcquireLock(alone, time.Second)
	require.NoError(t, err)
	l.Release()
	assert.NoDirExists(t, alone, "nor the directory made for it")
}

// The lock refuses a shadow directory that is a symbolic link (or a file) with one
// line, as CheckShadowDir does (a refusal), creating nothing through it; it makes a missing shadow directory and its
// parents as real directories, and removes them again on Release; a real one is
// used and kept.
func TestLockRefusesAPlantedShadowDirAndMakesRealOnes(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, at, outside string){
		"link": func(t *testing.T, at, outside string) { require.NoError(t, os.Symlink(outside, at)) },
		"file": func(t *testing.T, at, _ string) { require.NoError(t, os.WriteFile(at, []byte("x\n"), 0o644)) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			at, outside := filepath.Join(t.TempDir(), "shadow"), t.TempDir()
			plant(t, at, outside)
			l, err := AcquireLock(at, time.Second)
			require.Error(t, err)
			assert.Nil(t, l)
			assert.NotContains(t, err.Error(), "\n")
			require.ErrorIs(t, err, ErrRefused)
			if name == "link" {
				assert.Contains(t, err.Error(), at+": the shadow checkpoint directory is a symbolic link")
			} else {
				assert.Contains(t, err.Error(), at+": the shadow checkpoint directory is not a directory")
			}
			// A link planted after that check (a race) meets the no-follow mkdir.
			err = (&Lock{}).makeDirs(at)
			require.Error(t, err)
			if name == "link" {
				assert.ErrorIs(t, err, safewrite.ErrLink)
			}
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "no lock written through the link")
		})
	}

	base := t.TempDir()
	dir := filepath.Join(base, "projects", "h", "checkpoints", "h")
	l, err := AcquireLock(dir, time.Second)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, LockFile))
	l.Release()
	assert.NoDirExists(t, filepath.Join(base, "projects"), "the directories made for the lock are removed")

	require.NoError(t, os.Mkdir(filepath.Join(base, "real"), 0o755))
	l, err = AcquireLock(filepath.Join(base, "real"), time.Second)
	require.NoError(t, err)
	l.Release()
	assert.DirExists(t, filepath.Join(base, "real"), "a shadow dir that was there stays")
}
