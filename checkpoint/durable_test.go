package checkpoint

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLooseObjectsAreSyncedBeforeTheRefMoves: every loose object a checkpoint
// writes (a small snapshot, and any snapshot once the pack count is at its bound)
// is synced, with its directory, before the checkpoint's branch names it, so a
// power loss cannot leave the branch on an object whose bytes never reached the disk.
func TestLooseObjectsAreSyncedBeforeTheRefMoves(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.writeMany(40, 1)
	s := p.store()
	first, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)

	check := func(reason string, when time.Duration, prev plumbing.Hash) {
		t.Helper()
		before := looseFiles(t, p)
		synced := map[string]bool{}
		s.objects.synced = func(paths []string) {
			_, tip, err := s.shadowTip()
			require.NoError(t, err)
			assert.Equal(t, prev, tip, "%s: synced before the branch moves", reason)
			for _, p := range paths {
				synced[p] = true
			}
		}
		defer func() { s.objects.synced = nil }()
		cp, created, err := s.Create(CreateOptions{Reason: reason, Now: clockAt(when)})
		require.NoError(t, err)
		require.True(t, created)
		fresh := 0
		for f := range looseFiles(t, p) {
			if !before[f] {
				fresh++
				assert.True(t, synced[f], "%s: loose object %s synced", reason, filepath.Base(f))
			}
		}
		assert.Positive(t, fresh, "%s wrote loose objects", reason)
		prev = cp.Hash
	}
	p.write("gen/d0/f000.txt", "one change\n")
	check("pre-wave-2", 2*time.Hour, first.Hash)

	// At the pack bound every object of a snapshot is loose.
	s.objects.loadPacks()
	idx := emptyIdx(t)
	for len(s.objects.packList) < maxPacks {
		s.objects.packList = append(s.objects.packList, &packFile{path: filepath.Join(p.root, "none.pack"), idx: idx})
	}
	cps, _, err := s.List()
	require.NoError(t, err)
	p.writeMany(40, 2)
	check("pre-wave-3", 3*time.Hour, cps[len(cps)-1].Hash)
}

// looseFiles is the set of loose object files of p's shadow repository.
func looseFiles(t *testing.T, p *testProject) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(p.shadow, "objects", "??", "*"))
	require.NoError(t, err)
	out := map[string]bool{}
	for _, f := range files {
		out[f] = true
	}
	return out
}
