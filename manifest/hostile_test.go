//go:build unix

package manifest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/runfile"
)

// withinSeconds runs f and fails the test when it has not returned in a few
// seconds (a read that blocks on a FIFO): the reads of a run never wait.
func withinSeconds(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("blocked: a planted special file made the call wait")
		return nil
	}
}

// sparse makes path a file of size bytes that holds content and then zeros (a
// hole: nothing is stored), as an attacker plants a 4 GiB manifest in no space.
func sparse(t *testing.T, path, content string, size int64) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	require.NoError(t, os.Truncate(path, size))
}

const validLine = `{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"dispatched"}` + "\n"

// A manifest.jsonl.torn planted as a FIFO: the append that sets a torn last line
// aside fails at once naming the sidecar, and the manifest is left as it was.
func TestAppendWithAFIFOSidecarFailsAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	content := validLine + `{"seq":20,"file":"20-b`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, TornSidecar), 0o644))
	err := withinSeconds(t, func() error { _, err := AppendEntry(path, tornEntry(21)); return err })
	require.Error(t, err)
	assert.ErrorIs(t, err, runfile.ErrNotRegular)
	assert.Contains(t, err.Error(), TornSidecar)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(data), "nothing cut, nothing appended")
}

// A 4 GiB torn last line (a sparse file): the append reads no more than the
// longest torn line it sets aside and refuses, naming the limit.
func TestAppendWithAHugeTornLineRefusesWithoutReadingIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ManifestFile)
	sparse(t, path, validLine+`{"seq":20,"file":"`, 4<<30)
	err := withinSeconds(t, func() error { _, err := AppendEntry(path, tornEntry(21)); return err })
	require.Error(t, err)
	assert.ErrorIs(t, err, runfile.ErrTooLarge)
	assert.Contains(t, err.Error(), runfile.Size(maxTornLine))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(4<<30), st.Size(), "nothing cut")
}

// Repair of a 4 GiB sparse manifest refuses through the manifest's limit before it
// allocates anything of that size, and writes no backup.
func TestRepairOfAHugeManifestRefusesWithoutReadingIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	sparse(t, path, validLine+"garbage\n", 4<<30)
	err := withinSeconds(t, func() error { _, err := Repair(path, time.Unix(1, 0)); return err })
	require.Error(t, err)
	assert.ErrorIs(t, err, runfile.ErrTooLarge)
	backups, _ := filepath.Glob(filepath.Join(dir, ManifestFile+".bak-*"))
	assert.Empty(t, backups)
}
