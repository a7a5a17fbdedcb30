package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCachesFollowThePack: the stat cache (written while the trees are built) and
// the tree cache reach their names only after the snapshot's pack is complete, and
// not at all when it fails, leaving no temporary file.
func TestCachesFollowThePack(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.writeMany(60, 1)
	s := p.store()
	_, _, err := s.Create(CreateOptions{Reason: "first", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(p.shadow, name))
		require.NoError(t, err)
		return string(data)
	}
	statBefore, treeBefore := read(cacheFile), read(treeCacheFile)

	p.writeMany(60, 2)
	calls := 0
	s.objects.afterIdx = func() error {
		calls++
		assert.Equal(t, statBefore, read(cacheFile), "the stat cache is renamed before the pack")
		assert.Equal(t, treeBefore, read(treeCacheFile), "the tree cache is renamed before the pack")
		return errors.New("crash")
	}
	_, _, err = s.Create(CreateOptions{Reason: "second", Now: clockAt(2 * time.Hour)})
	require.ErrorContains(t, err, "crash")
	require.Equal(t, 1, calls)
	assert.Equal(t, statBefore, read(cacheFile))
	assert.Equal(t, treeBefore, read(treeCacheFile))
	entries, err := os.ReadDir(p.shadow)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), "temporary file %s left", e.Name())
	}

	s.objects.afterIdx = func() error {
		calls++
		assert.Equal(t, statBefore, read(cacheFile), "the stat cache is renamed before the pack")
		return nil
	}
	_, created, err := s.Create(CreateOptions{Reason: "second", Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 2, calls)
	assert.NotEqual(t, statBefore, read(cacheFile))
	assert.NotEqual(t, treeBefore, read(treeCacheFile))
}
