package manifest

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendNextNeverSharesASeq(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := AppendNext(path, func(seq int) (Entry, error) {
					return Entry{Seq: seq, File: "x.md", Role: "r", Status: StatusDispatched}, nil
				})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	m, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, m.Entries, writers*each, "every append took its own seq")
	assert.Equal(t, writers*each, m.MaxSeq)
}
