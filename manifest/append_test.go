package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendAfterTornLineSetsItAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "manifest.jsonl", `{"seq":1,"status":"completed"}`+"\n"+`{"seq":20,"file":"20-build-rev`)
	require.NoError(t, Append(path, Entry{Seq: 21, Status: StatusDispatched}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[1], `{"seq":21,`))
	side, err := os.ReadFile(filepath.Join(dir, TornSidecar))
	require.NoError(t, err)
	assert.Equal(t, `{"seq":20,"file":"20-build-rev`+"\n", string(side))
	m, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Stats.Valid)
	assert.Equal(t, 21, m.MaxSeq)
}

func TestAppendCreatesAndRefusesTooBig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "manifest.jsonl")
	require.NoError(t, Append(path, Entry{Seq: 1, Status: StatusDispatched}))
	err := Append(path, Entry{Seq: 2, Status: StatusDispatched, File: strings.Repeat("f", 5000)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+": seq 2")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "\n"), "nothing written for the refused entry")
}

// TestAppendConcurrentGoroutines checks the lock inside one process; the binary is
// tested with many processes in e2e/manifest_test.go.
func TestAppendConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "manifest.jsonl")
	const workers, each = 8, 50
	long := strings.Repeat("s", 3000) // lines near the atomic limit
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				seq := w*each + i + 1
				sum := fmt.Sprintf("%d %s", seq, long)
				assert.NoError(t, Append(path, Entry{Seq: seq, Status: StatusCompleted, Summary: &sum}))
			}
		}()
	}
	wg.Wait()
	m, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, Stats{Lines: workers * each, Valid: workers * each}, m.Stats)
	assert.Len(t, m.Entries, workers*each)
}

// TestAppendNeverFollowsASymlink plants manifest.jsonl as a symlink to another file:
// the append is refused and the target is unchanged; a real manifest is appended to.
func TestAppendNeverFollowsASymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := writeFile(t, t.TempDir(), "victim", "precious\n")
	path := filepath.Join(dir, ManifestFile)
	require.NoError(t, os.Symlink(victim, path))
	err := Append(path, Entry{Seq: 1, Status: StatusDispatched})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data))

	require.NoError(t, os.Remove(path))
	require.NoError(t, Append(path, Entry{Seq: 1, Status: StatusDispatched}))
	assert.FileExists(t, path)
}
