package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/store"
)

// TestDirHostileObjects: a FIFO, a link, a device-like non-file or an
// oversized (sparse) object planted in a directory store is refused at once,
// never read or blocked on; a regular object of the right size is read.
func TestDirHostileObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	d, err := store.OpenDir(root)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "blobs"), 0o755))
	require.NoError(t, testtools.Mkfifo(filepath.Join(root, "blobs", "fifo"), 0o644))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(root, "blobs", "link")))
	sparse, err := os.Create(filepath.Join(root, "blobs", "sparse"))
	require.NoError(t, err)
	require.NoError(t, sparse.Truncate(1<<40))
	require.NoError(t, sparse.Close())
	require.NoError(t, os.WriteFile(filepath.Join(root, "blobs", "ok"), []byte("fine"), 0o644))

	for _, k := range []string{"blobs/fifo", "blobs/link", "blobs/sparse"} {
		start := time.Now()
		_, _, err := d.Get(ctx, k, store.MaxObject)
		assert.ErrorIs(t, err, store.ErrCorrupt, k)
		assert.Less(t, time.Since(start), 5*time.Second, k)
	}
	_, _, err = d.Get(ctx, "blobs/ok", 3)
	assert.ErrorIs(t, err, store.ErrCorrupt, "4 bytes where 3 may be")
	data, _, err := d.Get(ctx, "blobs/ok", 4)
	require.NoError(t, err)
	assert.Equal(t, "fine", string(data))
	ok, err := d.Has(ctx, "blobs/fifo")
	require.NoError(t, err)
	assert.False(t, ok, "a FIFO is not an object")
	keys, err := d.List(ctx, "blobs/")
	require.NoError(t, err)
	assert.Equal(t, []string{"blobs/ok", "blobs/sparse"}, keys)
}

// TestDirLocksAndTempsStayInside: a store whose .locks or .tmp is a link
// gets no lock or temp file written through it; a link among a key's folders
// is refused too.
func TestDirLocksAndTempsStayInside(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, planted := range []string{".locks", ".tmp", "runs"} {
		root, outside := t.TempDir(), t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(root, planted)))
		d, err := store.OpenDir(root)
		require.NoError(t, err)
		_, err = d.PutIf(ctx, "runs/x/index.json", []byte("{}"), "")
		assert.Error(t, err, planted)
		entries, _ := os.ReadDir(outside)
		assert.Empty(t, entries, "%s: a write went through the link", planted)
	}
}

// TestDirSweepsDeadWritersTemps: a temp file nobody holds (its writer was
// killed) is removed when the store is next opened; one a live writer holds
// is kept.
func TestDirSweepsDeadWritersTemps(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".tmp"), 0o755))
	dead := filepath.Join(root, ".tmp", "dead")
	require.NoError(t, os.WriteFile(dead, []byte("half"), 0o644))
	live := filepath.Join(root, ".tmp", "live")
	require.NoError(t, os.WriteFile(live, []byte("half"), 0o644))
	f, err := os.Open(live)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, platform.Lock(f))
	_, err = store.OpenDir(root)
	require.NoError(t, err)
	assert.NoFileExists(t, dead)
	assert.FileExists(t, live)
}

// TestListingsAreCapped: a listing past the bounds is an error, not memory.
func TestListingsAreCapped(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := store.OpenDir(root)
	require.NoError(t, err)
	for i := range 12 {
		require.NoError(t, d.Put(ctx, "runs/"+strconv.Itoa(i), []byte("x")))
	}
	restore := store.SetListLimits(10, 1<<20)
	defer restore()
	_, err = d.List(ctx, "runs/")
	assert.ErrorIs(t, err, store.ErrCorrupt)
	restore()
	keys, err := d.List(ctx, "runs/")
	require.NoError(t, err)
	assert.Len(t, keys, 12)
}
