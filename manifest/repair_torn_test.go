package manifest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Repair keeps the append's rule for a torn last line: one over 16 MiB (a sparse
// file of NULs, say) is no crash's fragment and is refused before anything is
// read whole or written (repair moved a 900 MiB one into the sidecar, at 2.1 GB
// of memory, where append refuses it). A short torn line is still moved.
func TestRepairRefusesATornLineOverTheAppendsLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	line := `{"seq":1,"file":"1-a.md","role":"a","status":"dispatched"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(line+"junk\n"+line), 0o644))
	require.NoError(t, os.Truncate(path, int64(2*len(line)+5)+maxTornLine+1))
	_, err := Repair(path, time.Unix(1, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing was written")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no backup, no sidecar")

	require.NoError(t, os.WriteFile(path, []byte(line+"junk\n"+line+`{"seq":2,"fi`), 0o644))
	res, err := Repair(path, time.Unix(1, 0))
	require.NoError(t, err)
	assert.Equal(t, len(`{"seq":2,"fi`), res.TornBytes)
}
