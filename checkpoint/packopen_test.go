package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openPacks lists this process's descriptors open on a .pack file under dir (Linux:
// /proc/self/fd; the test is skipped elsewhere). Only dir's files count, so tests
// running in parallel do not see each other's.
func openPacks(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to list open descriptors")
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) && strings.HasSuffix(target, ".pack") {
			open = append(open, target)
		}
	}
	return open
}

// packedBlob returns a blob of checkpoint cp that sits in a pack.
func packedBlob(t *testing.T, s *Store, cp *Checkpoint) plumbing.Hash {
	t.Helper()
	files, err := s.objects.readTreeFiles(cp.Tree)
	require.NoError(t, err)
	h := files["gen/d0/f007.txt"].Hash
	_, _, ok := s.objects.inPacks(h)
	require.True(t, ok, "the blob is packed")
	return h
}

func TestRestoreAndMaterializeLeaveNoPackOpen(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	openPacks(t, p.root)
	p.writeMany(120, 1)
	s := p.store()
	first, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	want := p.state()
	p.writeMany(60, 2)
	_, err = s.Restore(*first, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, want, p.state())
	assert.Empty(t, openPacks(t, p.root), "a restore closes the packs it kept open")

	into := filepath.Join(p.root, "ab")
	require.NoError(t, os.Mkdir(into, 0o755))
	m, err := Open(p.shadow, into)
	require.NoError(t, err)
	n, err := m.Materialize(*first)
	require.NoError(t, err)
	assert.Greater(t, n, 120)
	assert.Empty(t, openPacks(t, p.root), "a materialize closes the packs it kept open")
}

func TestKeptPacksCloseWhenReleasedAndTheirLastReaderCloses(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	openPacks(t, p.root)
	p.writeMany(120, 1)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	h := packedBlob(t, s, cp)

	// Not kept: open while a reader is, closed with it.
	_, _, rc, err := s.objects.open(h)
	require.NoError(t, err)
	assert.Len(t, openPacks(t, p.root), 1)
	require.NoError(t, rc.Close())
	require.NoError(t, rc.Close(), "a second close is harmless")
	assert.Empty(t, openPacks(t, p.root))

	// Kept (twice, nested): one descriptor for every read, until the last release.
	release := s.objects.keepPacksOpen()
	inner := s.objects.keepPacksOpen()
	for range 3 {
		_, data, err := s.objects.read(h)
		require.NoError(t, err)
		assert.Equal(t, "file 7 version 1\n", string(data))
		assert.Len(t, openPacks(t, p.root), 1)
	}
	inner()
	inner()
	assert.Len(t, openPacks(t, p.root), 1, "the outer keep still holds it")
	_, _, rc, err = s.objects.open(h)
	require.NoError(t, err)
	release()
	assert.Len(t, openPacks(t, p.root), 1, "a reader still uses it")
	data := make([]byte, 4)
	_, err = rc.Read(data)
	require.NoError(t, err)
	assert.Equal(t, "file", string(data))
	require.NoError(t, rc.Close())
	assert.Empty(t, openPacks(t, p.root), "closed with its last reader")
}

// TestProjectObjectsKeptForARestore: while keepProjectObjects holds it, the
// project's store is made once and its packs stay open; its release (and the end
// of a restore) closes them, and the store is made anew afterwards.
func TestProjectObjectsKeptForARestore(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	openPacks(t, p.root)
	p.writeMany(40, 1)
	p.commit("many", base.Add(time.Minute))
	gitIn(t, p.dir, "gc", "--prune=now", "--quiet")
	gitDir := filepath.Join(p.dir, ".git")
	s := p.store()
	first, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	assert.NotSame(t, s.projectObjects(), s.projectObjects(), "not held: a store per call")

	release := s.keepProjectObjects()
	proj := s.projectObjects()
	require.NotNil(t, proj)
	assert.Same(t, proj, s.projectObjects())
	_, err = s.commitFiles(p.head())
	require.NoError(t, err)
	assert.Len(t, openPacks(t, gitDir), 1, "the project's pack stays open")
	release()
	release()
	assert.Empty(t, openPacks(t, gitDir), "closed on release")
	assert.NotSame(t, proj, s.projectObjects())

	p.writeMany(20, 2)
	_, err = s.Restore(*first, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, openPacks(t, gitDir), "a restore closes the project's packs")
}
