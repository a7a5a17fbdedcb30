package share_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

// failingStore fails every Put after the first n.
type failingStore struct {
	store.Backend
	n    int32
	puts atomic.Int32
}

func (f *failingStore) Put(ctx context.Context, key string, data []byte) error {
	if f.puts.Add(1) > f.n {
		return errors.New("connection reset")
	}
	return f.Backend.Put(ctx, key, data)
}

// TestInterruptedPushShowsNoRun: a push that fails part-way leaves objects but
// no index, so no reader sees the run; the next push completes it.
func TestInterruptedPushShowsNoRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := buildRun(t)
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	_, err = share.Push(ctx, &failingStore{Backend: b, n: 5}, src, share.PushOptions{Replay: "test"})
	require.Error(t, err)
	ids, err := share.Runs(ctx, b)
	require.NoError(t, err)
	assert.Empty(t, ids, "no index after a failed push")
	_, err = share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(t.TempDir(), "x")})
	require.ErrorIs(t, err, share.ErrNoRun)
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	assert.Less(t, res.New, res.Objects, "the objects of the failed push are reused")
	ids, err = share.Runs(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []string{res.Run}, ids)
}

// TestPushOfAGrownRunReplacesItsIndex: the run id stays when the manifest
// grows; the new index replaces the old (a compare-and-swap) and only the
// changed file is uploaded.
func TestPushOfAGrownRunReplacesItsIndex(t *testing.T) {
	t.Parallel()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p, src := buildRun(t)
			b := open(t)
			first, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
			require.NoError(t, err)
			f, err := os.OpenFile(p.ManifestPath, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("\n{\"seq\":21,\"file\":\"21-x.md\",\"status\":\"dispatched\"}\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			second, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
			require.NoError(t, err)
			assert.Equal(t, first.Run, second.Run)
			assert.Equal(t, 1, second.New)
			assert.True(t, second.IndexWritten)
			pr, err := share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(t.TempDir(), "x")})
			require.NoError(t, err)
			rel, err := filepath.Rel(p.Scratch, p.ManifestPath)
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(pr.Scratch, rel))
			require.NoError(t, err)
			want, err := os.ReadFile(p.ManifestPath)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestPushOfALiveOnlyRun: with no durable copy in the scratch dir, the live
// dispatch dir is pushed in its place, and the pulled run has its manifest there.
func TestPushOfALiveOnlyRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, src := buildRun(t)
	require.NoError(t, os.RemoveAll(p.DurableDispatchDir))
	src.Path = p.LiveDispatchDir
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	_, err = share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	pr, err := share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(t.TempDir(), "x")})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(pr.Scratch, filepath.Base(p.LiveDispatchDir), "manifest.jsonl"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(p.LiveDispatchDir, "manifest.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}
