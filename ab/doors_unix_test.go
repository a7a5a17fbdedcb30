//go:build unix

package ab

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LastDiffRecord reads replay-diff.jsonl through runfile: a FIFO, a link to
// /dev/zero or an 8 GiB sparse file planted in its place is refused at once (no
// record), never waited on, read without end or allocated; a real log is read.
func TestLastDiffRecordRefusesPlantedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	zero := filepath.Join(dir, "zero.jsonl")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	huge := filepath.Join(dir, "huge.jsonl") // sparse: 8 GiB, nothing allocated on disk
	require.NoError(t, os.WriteFile(huge, nil, 0o644))
	require.NoError(t, os.Truncate(huge, 8<<30))
	real := filepath.Join(dir, DiffJSONLFile)
	require.NoError(t, os.WriteFile(real, []byte(`{"type":"replay-diff","replay_session":"s1"}`+"\n"), 0o644))
	for _, path := range []string{fifo, zero, huge} {
		done := make(chan bool, 1)
		go func() {
			rec, _ := LastDiffRecord(path, "s1")
			done <- rec == nil
		}()
		select {
		case none := <-done:
			assert.True(t, none, path)
		case <-time.After(30 * time.Second):
			t.Fatalf("LastDiffRecord(%s) blocked", path)
		}
	}
	rec, _ := LastDiffRecord(real, "s1")
	require.NotNil(t, rec)
	assert.Equal(t, "s1", rec.ReplaySession)
}
