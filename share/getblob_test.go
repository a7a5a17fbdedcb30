package share

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/store"
)

// pushedBlob puts data into a directory store as a blob and returns both.
func pushedBlob(t *testing.T, data []byte) (store.Backend, string, Blob) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	b, err := store.OpenEnv(ctx, root, os.Getenv)
	require.NoError(t, err)
	u := newUploader(ctx, b, map[string]bool{})
	blob, err := u.putBlob(bytes.NewReader(data), int64(len(data)), "data")
	require.NoError(t, err)
	require.NoError(t, u.close()) // every upload in flight finished
	return b, root, blob
}

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestGetBlobChecksEveryChunk: a blob of three chunks is fetched while the
// previous chunk is written; a corrupt middle chunk, a chunk list shorter than
// the size, and a failing writer each end the fetch with their error.
func TestGetBlobChecksEveryChunk(t *testing.T) {
	ctx := context.Background()
	data := make([]byte, 2*ChunkSize+777)
	_, _ = rand.Read(data)
	b, root, blob := pushedBlob(t, data)
	require.Len(t, blob.Chunks, 3)

	var got bytes.Buffer
	require.NoError(t, getBlob(ctx, b, blob, &got, "r"))
	assert.True(t, bytes.Equal(data, got.Bytes()))

	short := blob
	short.Chunks = blob.Chunks[:2]
	err := getBlob(ctx, b, short, &bytes.Buffer{}, "r")
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), "shorter than")

	err = getBlob(ctx, b, blob, &failAfter{n: ChunkSize}, "r")
	require.EqualError(t, err, "disk full")

	middle := filepath.Join(root, filepath.FromSlash(BlobKey(blob.Chunks[1])))
	bad := bytes.Clone(data[ChunkSize : 2*ChunkSize])
	bad[100] ^= 1
	require.NoError(t, os.Chmod(middle, 0o644))
	require.NoError(t, os.WriteFile(middle, bad, 0o644))
	got.Reset()
	err = getBlob(ctx, b, blob, &got, "r")
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), blob.Chunks[1])
	assert.Equal(t, ChunkSize, got.Len(), "only the chunk before the corrupt one was written")
}

// TestPutBlobSmallHashesOnce: a blob of one chunk is named by that chunk's
// hash, the same the whole would have.
func TestPutBlobSmallHashesOnce(t *testing.T) {
	_, _, blob := pushedBlob(t, []byte("hello"))
	assert.Equal(t, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", blob.SHA256)
	assert.Empty(t, blob.Chunks)
}
