package checkpoint

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamFixture is a store with no project, a cache of cached files recorded at
// start, and a snapshot list made of some of them (some changed) and new files.
func streamFixture(t *testing.T, seed uint64) (*Store, []*fileState, int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	start := int64(1e12)
	var cached, list []*fileState
	for i := range 300 {
		f := &fileState{rel: fmt.Sprintf("d%02d/f%03d", i%17, i), mode: filemode.Regular, size: int64(i), mtime: start - 5e9}
		f.hash[0], f.hash[1] = byte(i), byte(i>>8)
		if rng.IntN(10) == 0 {
			f.mtime = start - 1e9 // racy
		}
		if rng.IntN(5) != 0 {
			cached = append(cached, f)
		}
		g := *f
		g.hash = plumbing.ZeroHash
		switch rng.IntN(8) {
		case 0:
			continue // deleted since
		case 1:
			g.size++
		case 2:
			g.mode = filemode.Executable
		}
		list = append(list, &g)
	}
	sortFiles(cached)
	sortFiles(list)
	s := &Store{shadowDir: t.TempDir()}
	require.NoError(t, s.saveCache(start, cached))
	return s, list, start
}

func sortFiles(l []*fileState) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j-1].rel > l[j].rel; j-- {
			l[j-1], l[j] = l[j], l[j-1]
		}
	}
}

// TestStreamCacheMatchesLookup: merging the cache file with a snapshot's list
// finds exactly the hashes loadCache's lookups find, and leaves the others to hash.
func TestStreamCacheMatchesLookup(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		s, list, _ := streamFixture(t, seed)
		m, ok := s.mergeCache(list)
		require.True(t, ok)
		c := s.loadCache()
		assert.Equal(t, len(c.recs), m.records)
		left := map[*fileState]bool{}
		for _, f := range m.todo {
			left[f] = true
		}
		for _, f := range list {
			h, hit := c.lookup(f.rel, f.mode, f.size, f.mtime)
			assert.Equal(t, !hit, left[f], f.rel)
			if hit {
				assert.Equal(t, h, f.hash, f.rel)
			} else {
				assert.True(t, f.hash.IsZero(), f.rel)
			}
		}
	}
}

// TestStreamCacheDropsDamage: a cache damaged anywhere gives no hash at all (every
// file is left to hash), never a wrong one; a first-format cache is left to loadCache.
func TestStreamCacheDropsDamage(t *testing.T) {
	t.Parallel()
	s, list, _ := streamFixture(t, 7)
	path := filepath.Join(s.shadowDir, cacheFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, at := range []int{0, len(cacheMagicSummed), len(cacheMagicSummed) + 3, len(good) / 3, len(good) / 2, len(good) - 5, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x20
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		m, ok := s.mergeCache(list)
		if !ok { // the magic was hit: not a cache mergeCache reads
			assert.Equal(t, 0, at)
			continue
		}
		assert.Len(t, m.todo, len(list), "byte %d", at)
		assert.Zero(t, m.records, "byte %d", at)
		for _, f := range list {
			require.True(t, f.hash.IsZero(), "byte %d: %s", at, f.rel)
		}
	}
	for _, cut := range [][]byte{nil, good[:len(good)/2], good[:len(good)-1], append(bytes.Clone(good), 0)} {
		require.NoError(t, os.WriteFile(path, cut, 0o644))
		m, ok := s.mergeCache(list)
		require.True(t, ok)
		assert.Len(t, m.todo, len(list))
	}
	first := append([]byte(cacheMagic), good[len(cacheMagicSummed):len(good)-4]...)
	require.NoError(t, os.WriteFile(path, first, 0o644))
	_, ok := s.mergeCache(list)
	assert.False(t, ok, "the first format is read by loadCache")
}
