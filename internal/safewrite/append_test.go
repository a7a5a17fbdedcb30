package safewrite

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

func TestAppendLineEndsATornLineAndNeverInterleaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"torn`), 0o644))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				assert.NoError(t, AppendLine(path, []byte(fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat("x", 500)))))
			}
		}(w)
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 401)
	assert.Equal(t, `{"torn`, lines[0])
	for _, l := range lines[1:] {
		assert.True(t, strings.HasPrefix(l, `{"w":`) && strings.HasSuffix(l, `"}`), l)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f")
	require.NoError(t, WriteAtomic(path, []byte("one")))
	require.NoError(t, WriteAtomic(path, []byte("two")))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp file left")
}
