package checkpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
