package store_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/replaytool/replay/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDirPutGetList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	require.NoError(t, d.Put(ctx, "blobs/a", []byte("A")))
	require.NoError(t, d.Put(ctx, "runs/x/index.json", []byte("{}")))
	data, ver, err := d.Get(ctx, "blobs/a", store.MaxObject)
	require.NoError(t, err)
	assert.Equal(t, "A", string(data))
	assert.Len(t, ver, 64)
	keys, err := d.List(ctx, "blobs/")
	require.NoError(t, err)
	assert.Equal(t, []string{"blobs/a"}, keys)
	_, _, err = d.Get(ctx, "blobs/none", store.MaxObject)
	assert.ErrorIs(t, err, store.ErrNotFound)
	ok, err := d.Has(ctx, "runs/x/index.json")
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestDirRefusesBadKeysAndLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "runs")))
	d, err := store.OpenEnv(ctx, "file://"+root, os.Getenv)
	require.NoError(t, err)
	for _, k := range []string{"", "/etc/passwd", "../x", "a/../../x", "a//b", ".locks/x", "a/.tmp-1"} {
		assert.ErrorIs(t, d.Put(ctx, k, []byte("x")), store.ErrBadURL, k)
	}
	assert.Error(t, d.Put(ctx, "runs/x", []byte("x")))
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries, "a write went through a symlink")
}

func TestDirPutIfIsACompareAndSwap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	v1, err := d.PutIf(ctx, "idx", []byte("1"), "")
	require.NoError(t, err)
	_, err = d.PutIf(ctx, "idx", []byte("x"), "")
	assert.ErrorIs(t, err, store.ErrConflict)
	v2, err := d.PutIf(ctx, "idx", []byte("2"), v1)
	require.NoError(t, err)
	_, err = d.PutIf(ctx, "idx", []byte("3"), v1)
	assert.ErrorIs(t, err, store.ErrConflict)

	// Concurrent read-modify-write loops lose no update.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				data, ver, err := d.Get(ctx, "idx", store.MaxObject)
				require.NoError(t, err)
				if _, err := d.PutIf(ctx, "idx", append(data, '+'), ver); err == nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	data, _, err := d.Get(ctx, "idx", store.MaxObject)
	require.NoError(t, err)
	assert.Equal(t, "2++++++++", string(data))
	_ = v2
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := store.OpenEnv(ctx, filepath.Join(t.TempDir(), "missing"), os.Getenv)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = store.OpenEnv(ctx, "ftp://x", os.Getenv)
	assert.ErrorIs(t, err, store.ErrBadURL)
	_, err = store.OpenEnv(ctx, "", os.Getenv)
	assert.ErrorIs(t, err, store.ErrBadURL)
}
