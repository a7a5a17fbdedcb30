package share_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

// BenchmarkPushUnchanged measures a second push of the reference run to a
// directory store: reading and hashing the run and bundling its checkpoints,
// with nothing uploaded.
func BenchmarkPushUnchanged(b *testing.B) {
	p, err := fixture.Build(b.TempDir(), fixture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	src := share.Source{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project}
	ctx := context.Background()
	st, err := store.OpenEnv(ctx, b.TempDir(), os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := share.Push(ctx, st, src, share.PushOptions{Replay: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		res, err := share.Push(ctx, st, src, share.PushOptions{Replay: "bench"})
		if err != nil || res.New != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkPull measures a pull of the reference run from a directory store
// (every object read and hashed, the shadow repository unbundled).
func BenchmarkPull(b *testing.B) {
	p, err := fixture.Build(b.TempDir(), fixture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	src := share.Source{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project}
	ctx := context.Background()
	st, err := store.OpenEnv(ctx, b.TempDir(), os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := share.Push(ctx, st, src, share.PushOptions{Replay: "bench"}); err != nil {
		b.Fatal(err)
	}
	dest := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		if _, err := share.Pull(ctx, st, share.PullOptions{Into: filepath.Join(dest, strconv.Itoa(i)), Repo: p.Project}); err != nil {
			b.Fatal(err)
		}
	}
}
