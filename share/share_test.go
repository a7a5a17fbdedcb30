package share_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/s3test"
	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

func buildRun(t *testing.T, variants ...fixture.Variant) (*fixture.Pipeline, share.Source) {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: variants})
	require.NoError(t, err)
	return p, share.Source{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project}
}

// stores returns a fresh directory store and a fresh bucket on a real S3 server.
func stores(t *testing.T) map[string]func(t *testing.T) store.Backend {
	srv := s3test.Start(t)
	var mu sync.Mutex
	n := 0
	return map[string]func(t *testing.T) store.Backend{
		"dir": func(t *testing.T) store.Backend {
			b, err := store.OpenEnv(context.Background(), t.TempDir(), os.Getenv)
			require.NoError(t, err)
			return b
		},
		"s3": func(t *testing.T) store.Backend {
			mu.Lock()
			n++
			bucket := "runs-" + string(rune('a'+n))
			mu.Unlock()
			srv.MakeBucket(t, bucket+"xx")
			env := map[string]string{"HOME": t.TempDir(), "AWS_EC2_METADATA_DISABLED": "true"}
			for _, kv := range srv.Env() {
				k, v, _ := cut(kv)
				env[k] = v
			}
			b, err := store.OpenEnv(context.Background(), srv.URL(bucket+"xx", "team"), func(k string) string { return env[k] })
			require.NoError(t, err)
			return b
		},
	}
}

func cut(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// readTree returns every regular file under root, by slash path.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		require.NoError(t, err)
		if e.Type().IsRegular() {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	}))
	return out
}

func refsOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	iter, err := st.IterReferences()
	require.NoError(t, err)
	out := map[string]string{}
	require.NoError(t, iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			out[r.Name().String()] = r.Hash().String()
		}
		return nil
	}))
	return out
}

func TestPushPullRoundTrip(t *testing.T) {
	t.Parallel()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p, src := buildRun(t)
			b := open(t)
			before, err := fixture.Digest(p.Root)
			require.NoError(t, err)
			res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
			require.NoError(t, err)
			assert.Equal(t, res.Objects, res.New)
			assert.True(t, res.Checkpoints)
			assert.True(t, res.IndexWritten)
			assert.Regexp(t, `^`+p.SessionID+`-[0-9a-f]{12}$`, res.Run)
			after, err := fixture.Digest(p.Root)
			require.NoError(t, err)
			assert.Equal(t, before, after, "push changes nothing on disk")

			again, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
			require.NoError(t, err)
			assert.Equal(t, 0, again.New)
			assert.False(t, again.IndexWritten)
			assert.Contains(t, again.Summary("x"), " 0 new objects")

			into := filepath.Join(t.TempDir(), "pulled")
			pr, err := share.Pull(ctx, b, share.PullOptions{Into: into, Repo: p.Project})
			require.NoError(t, err)
			assert.Equal(t, res.Run, pr.Run)
			h := filepath.Base(filepath.Dir(p.Scratch))
			assert.Equal(t, filepath.Join(into, h, "memory"), pr.Scratch)

			orig := readTree(t, p.Scratch)
			got := readTree(t, pr.Scratch)
			assert.Equal(t, orig, got, "the scratch dir arrives byte for byte")
			assert.Equal(t, refsOf(t, p.Shadow), refsOf(t, pr.Shadow), "every checkpoint ref arrives")
			cm, err := os.ReadFile(filepath.Join(pr.Shadow, "checkpoint-manifest.md"))
			require.NoError(t, err)
			want, err := os.ReadFile(p.CheckpointManifest)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(cm))
			leftovers, err := filepath.Glob(filepath.Join(filepath.Dir(into), ".replay-pull-*"))
			require.NoError(t, err)
			assert.Empty(t, leftovers)
		})
	}
}
