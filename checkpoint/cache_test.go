package checkpoint

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agedProject is a test project whose files are an hour old, so the stat cache
// trusts their records (none is in the racy window); its symlink, whose mtime
// cannot be set portably, is removed.
func agedProject(t *testing.T) *testProject {
	t.Helper()
	p := newTestProject(t)
	require.NoError(t, os.Remove(p.abs("docs")))
	p.write("src/more.go", "package app // more\n")
	old := time.Now().Add(-time.Hour)
	for _, rel := range []string{".gitignore", "README.md", "src/app.go", "src/deep/util.go", "run.sh", "src/more.go"} {
		require.NoError(t, os.Chtimes(p.abs(rel), old, old))
	}
	return p
}

// snapshotTree takes a snapshot (saving the cache) and returns its tree.
func snapshotTree(t *testing.T, s *Store) plumbing.Hash {
	t.Helper()
	snap, err := s.takeSnapshot(true)
	require.NoError(t, err)
	return snap.tree
}

// resum rewrites the checksum at the end of a summed cache after data was changed.
func resum(data []byte) []byte {
	body := len(data) - crc32.Size
	binary.BigEndian.PutUint32(data[body:], crc32.Checksum(data[:body], castagnoli))
	return data
}

// TestDamagedCacheIsDroppedNotTrusted: the cache is written without fsync, so a
// crash can leave it truncated, zero-filled or garbled; the next snapshot must drop
// it and still compute exactly the right tree. The control case (a wrong hash with a
// valid checksum) shows the damage would change the tree if the cache were trusted.
func TestDamagedCacheIsDroppedNotTrusted(t *testing.T) {
	t.Parallel()
	p := agedProject(t)
	s := p.store()
	want := snapshotTree(t, s)
	path := filepath.Join(p.shadow, cacheFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(good, []byte(cacheMagicSummed)))
	require.Len(t, s.loadCache().recs, 6, "every file is cached")
	// The last record's hash ends just before the checksum.
	hashAt := len(good) - crc32.Size - 1
	damage := map[string]func([]byte) []byte{
		"empty":          func([]byte) []byte { return nil },
		"truncated":      func(b []byte) []byte { return b[:len(b)/2] },
		"checksum cut":   func(b []byte) []byte { return b[:len(b)-1] },
		"zero tail":      func(b []byte) []byte { clear(b[len(b)/2:]); return b },
		"all zeros":      func(b []byte) []byte { clear(b); return b },
		"flipped hash":   func(b []byte) []byte { b[hashAt] ^= 0xff; return b },
		"flipped header": func(b []byte) []byte { b[len(cacheMagicSummed)] ^= 0x01; return b },
		"trailing bytes": func(b []byte) []byte { return append(b, 0, 0, 0, 0) },
	}
	for name, f := range damage {
		require.NoError(t, os.WriteFile(path, f(bytes.Clone(good)), 0o644))
		assert.Empty(t, s.loadCache().recs, name)
		assert.Equal(t, want, snapshotTree(t, s), name)
	}

	// Control: the same flipped hash with a valid checksum is trusted, and the tree
	// is wrong, so the cases above test something.
	bad := bytes.Clone(good)
	bad[hashAt] ^= 0xff
	require.NoError(t, os.WriteFile(path, resum(bad), 0o644))
	snap, err := s.takeSnapshot(false)
	require.NoError(t, err)
	assert.NotEqual(t, want, snap.tree, "a trusted wrong hash changes the tree")
}

// TestStaleCacheGivesTheRightTree: a crash can also lose the rename of the new
// cache and leave the previous one; the files changed since then do not match its
// records and are hashed again.
func TestStaleCacheGivesTheRightTree(t *testing.T) {
	t.Parallel()
	p := agedProject(t)
	s := p.store()
	snapshotTree(t, s)
	path := filepath.Join(p.shadow, cacheFile)
	stale, err := os.ReadFile(path)
	require.NoError(t, err)
	p.write("src/app.go", "package app // changed\n")
	p.write("src/more.go", "package ap\n") // shorter
	require.NoError(t, os.Remove(p.abs("README.md")))
	want := snapshotTree(t, s)
	require.NoError(t, os.WriteFile(path, stale, 0o644))
	assert.Equal(t, want, snapshotTree(t, s))
	fresh := agedProjectTree(t, p)
	assert.Equal(t, fresh, want, "the same tree as a store without a cache")
}

// agedProjectTree is the tree of p's working tree computed with no cache at all.
func agedProjectTree(t *testing.T, p *testProject) plumbing.Hash {
	t.Helper()
	s := p.store()
	require.NoError(t, os.Remove(filepath.Join(p.shadow, cacheFile)))
	return snapshotTree(t, s)
}

// TestUnchangedCacheIsNotRewritten: a snapshot that found every file in the cache,
// none racy and none gone, leaves the cache file as it is.
func TestUnchangedCacheIsNotRewritten(t *testing.T) {
	t.Parallel()
	p := agedProject(t)
	s := p.store()
	want := snapshotTree(t, s)
	path := filepath.Join(p.shadow, cacheFile)
	before, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want, snapshotTree(t, s))
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the cache was rewritten")

	require.NoError(t, os.Remove(p.abs("README.md"))) // a record left over
	snapshotTree(t, s)
	after, err = os.Stat(path)
	require.NoError(t, err)
	assert.False(t, os.SameFile(before, after), "the cache must drop the removed file")
	assert.Len(t, s.loadCache().recs, 5)
}

// TestFirstFormatCacheIsRead: a cache written by the previous version (no
// checksum, fsynced) is still used.
func TestFirstFormatCacheIsRead(t *testing.T) {
	t.Parallel()
	p := agedProject(t)
	s := p.store()
	snapshotTree(t, s)
	path := filepath.Join(p.shadow, cacheFile)
	summed, err := os.ReadFile(path)
	require.NoError(t, err)
	first := append([]byte(cacheMagic), summed[len(cacheMagicSummed):len(summed)-crc32.Size]...)
	require.NoError(t, os.WriteFile(path, first, 0o644))
	assert.Len(t, s.loadCache().recs, 6)
}
