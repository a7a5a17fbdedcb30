package checkpoint

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// treeFuzz changes a test project at random, giving every changed path its own
// mtime an hour in the past, so the stat cache trusts what did not change (a
// fresh mtime would be racy, and every directory re-built).
type treeFuzz struct {
	p     *testProject
	rng   *rand.Rand
	tick  time.Time
	paths map[string]bool // the non-ignored files, executables and symlinks
}

func newTreeFuzz(t *testing.T, seed uint64) *treeFuzz {
	p := newTestProject(t)
	z := &treeFuzz{p: p, rng: rand.New(rand.NewPCG(seed, 7)), tick: time.Now().Add(-time.Hour), paths: map[string]bool{}}
	for _, rel := range []string{".gitignore", "README.md", "src/app.go", "src/deep/util.go", "run.sh", "docs", "node_modules/lib/index.js", "build.log"} {
		z.age(rel)
	}
	for _, rel := range []string{".gitignore", "README.md", "src/app.go", "src/deep/util.go", "run.sh", "docs"} {
		z.paths[rel] = true
	}
	for range 60 {
		z.add()
	}
	return z
}

// age gives rel an mtime of its own, in the past.
func (z *treeFuzz) age(rel string) {
	z.tick = z.tick.Add(time.Second)
	ts := unix.NsecToTimespec(z.tick.UnixNano())
	require.NoError(z.p.t, unix.UtimesNanoAt(unix.AT_FDCWD, z.p.abs(rel), []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW))
}

func (z *treeFuzz) randomDir() string {
	dirs := []string{"", "a", "a/b", "a/b/c", "a/b-x", "a.d", "z", "z/y", "src", "src/deep", "e/m/p/t"}
	return dirs[z.rng.IntN(len(dirs))]
}

func (z *treeFuzz) pick() string {
	all := make([]string, 0, len(z.paths))
	for p := range z.paths {
		all = append(all, p)
	}
	sort.Strings(all)
	return all[z.rng.IntN(len(all))]
}

func (z *treeFuzz) add() {
	rel := filepath.ToSlash(filepath.Join(z.randomDir(), fmt.Sprintf("f%d.txt", z.rng.IntN(1000))))
	if z.paths[rel] || z.paths[filepath.ToSlash(filepath.Dir(rel))] {
		return
	}
	z.p.write(rel, fmt.Sprintf("content %d\n", z.rng.Int()))
	z.age(rel)
	z.paths[rel] = true
}

// change makes one random change: an edit, a new file, a deletion (which may
// leave a directory empty), a mode change, a file becoming a symlink, or a change
// of ignored files only.
func (z *treeFuzz) change() {
	switch z.rng.IntN(7) {
	case 0:
		z.add()
	case 1:
		rel := z.pick()
		require.NoError(z.p.t, os.Remove(z.p.abs(rel)))
		delete(z.paths, rel)
	case 2:
		rel := z.pick()
		os.Remove(z.p.abs(rel))
		z.p.write(rel, fmt.Sprintf("edited %d\n", z.rng.Int()))
		z.age(rel)
	case 3:
		rel := z.pick()
		if info, err := os.Lstat(z.p.abs(rel)); err == nil && info.Mode().IsRegular() {
			require.NoError(z.p.t, os.Chmod(z.p.abs(rel), info.Mode().Perm()^0o111))
			z.age(rel)
		}
	case 4:
		rel := z.pick()
		z.p.symlink(rel, fmt.Sprintf("target-%d", z.rng.IntN(50)))
		z.age(rel)
	case 5:
		rel := fmt.Sprintf("node_modules/m%d/i.js", z.rng.IntN(5))
		if z.rng.IntN(2) == 0 {
			rel = filepath.ToSlash(filepath.Join(z.randomDir(), fmt.Sprintf("x%d.log", z.rng.IntN(5))))
		}
		z.p.write(rel, fmt.Sprintf("ignored %d\n", z.rng.Int()))
		z.age(rel)
	case 6: // an empty directory: no tree of its own
		require.NoError(z.p.t, os.MkdirAll(z.p.abs(filepath.Join("empty", fmt.Sprint(z.rng.IntN(3)))), 0o755))
	}
}

// fullTree is the tree of the working tree built without the tree cache.
func fullTree(t *testing.T, s *Store) plumbing.Hash {
	t.Helper()
	path := filepath.Join(s.shadowDir, treeCacheFile)
	saved, err := os.ReadFile(path)
	if err == nil {
		require.NoError(t, os.Remove(path))
		defer func() { require.NoError(t, os.WriteFile(path, saved, 0o644)) }()
	}
	snap, err := s.takeSnapshot(false)
	require.NoError(t, err)
	return snap.tree
}

// newestTree is the tree of the newest checkpoint.
func newestTree(t *testing.T, s *Store) plumbing.Hash {
	t.Helper()
	_, tip, err := s.shadowTip()
	require.NoError(t, err)
	c, err := s.repo.CommitObject(tip)
	require.NoError(t, err)
	return c.TreeHash
}

// currentTreeCache is the tree cache as a snapshot now would take it, or nil.
func currentTreeCache(t *testing.T, s *Store) *treeCache {
	t.Helper()
	snap, err := s.walkList()
	require.NoError(t, err)
	m, ok := s.mergeCache(snap.sorted)
	require.True(t, ok)
	if !m.valid {
		return nil
	}
	return s.loadTreeCache(m.key)
}

// TestTreeCacheEqualsFullBuild: checkpoints that reuse the trees of unchanged
// directories have exactly the tree a full build gives, over random changes of
// every kind, and the cache is really there to be reused after each.
func TestTreeCacheEqualsFullBuild(t *testing.T) {
	seeds := uint64(2) // 2 random histories of 15 checkpoints; 20 under REPLAY_STRESS
	if os.Getenv("REPLAY_STRESS") != "" {
		seeds = 20
	}
	for seed := range seeds {
		z := newTreeFuzz(t, seed)
		s := z.p.store()
		for round := range 15 {
			for range 1 + z.rng.IntN(5) {
				z.change()
			}
			_, _, err := s.Create(CreateOptions{Reason: fmt.Sprintf("r%d", round), Now: clockAt(time.Duration(round) * time.Minute)})
			require.NoError(t, err)
			require.Equal(t, fullTree(t, s), newestTree(t, s), "seed %d round %d", seed, round)
			require.NotNil(t, currentTreeCache(t, s), "seed %d round %d: no usable tree cache", seed, round)
		}
	}
}

// TestTreeCacheDamagedIsDropped: a torn, truncated, foreign or stale tree cache
// is dropped whole (the tree is the full build's), and a tree cache that matches
// is really what the tree is taken from.
func TestTreeCacheDamagedIsDropped(t *testing.T) {
	z := newTreeFuzz(t, 99)
	s := z.p.store()
	path := filepath.Join(s.shadowDir, treeCacheFile)
	create := func(reason string) {
		t.Helper()
		_, _, err := s.Create(CreateOptions{Reason: reason, Now: clockAt(time.Minute)})
		require.NoError(t, err)
	}
	create("first")
	stale, err := os.ReadFile(path)
	require.NoError(t, err)
	z.change()
	z.add()
	create("second")
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	// A tree cache that matches is used: one whose trees are all wrong gives a
	// wrong tree (which is why it is tied to the stat cache and checksummed).
	c := currentTreeCache(t, s)
	require.NotNil(t, c)
	var bogus []dirTree
	for i, d := range c.dirs {
		bogus = append(bogus, dirTree{d, plumbing.Hash{byte(i), 1}})
	}
	require.NoError(t, s.saveTreeCache(c.key, bogus))
	snap, err := s.takeSnapshot(false)
	require.NoError(t, err)
	require.NotEqual(t, newestTree(t, s), snap.tree)

	damaged := map[string][]byte{
		"stale":     stale,
		"truncated": good[:len(good)/2],
		"empty":     {},
		"garbage":   []byte("replay-tree-cache 1\nnot a cache at all"),
	}
	for i := range []int{3, len(treeCacheMagic) + 2, len(good) / 2, len(good) - 2} {
		flipped := append([]byte(nil), good...)
		flipped[[]int{3, len(treeCacheMagic) + 2, len(good) / 2, len(good) - 2}[i]] ^= 0x10
		damaged[fmt.Sprintf("flipped%d", i)] = flipped
	}
	for name, data := range damaged {
		require.NoError(t, os.WriteFile(path, data, 0o644))
		require.Nil(t, currentTreeCache(t, s), name)
		snap, err := s.takeSnapshot(false)
		require.NoError(t, err)
		require.Equal(t, newestTree(t, s), snap.tree, name)
	}

	// A stat cache saved by anyone else (a restore) leaves the tree cache stale.
	require.NoError(t, os.WriteFile(path, good, 0o644))
	require.NotNil(t, currentTreeCache(t, s))
	for n := len(z.paths); len(z.paths) == n; {
		z.add()
	}
	snap, err = s.walkList()
	require.NoError(t, err)
	require.NoError(t, s.finishSnapshot(snap, time.Now().UnixNano(), true))
	require.Nil(t, currentTreeCache(t, s))

	z.change()
	z.add()
	create("after")
	require.Equal(t, fullTree(t, s), newestTree(t, s))
	require.NotNil(t, currentTreeCache(t, s))
}
