package share_test

import (
	"context"
	"math/rand/v2"
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

// BenchmarkPushPullLarge measures a push to a directory store and a pull back of
// the reference run holding one large file of random bytes (REPLAY_BENCH_MIB MiB,
// default 64): chunking, hashing, compressing and syncing dominate; profile with
// -cpuprofile (bench/share.sh has the ratio to git and cp).
func BenchmarkPushPullLarge(b *testing.B) {
	mib := 64
	if v, err := strconv.Atoi(os.Getenv("REPLAY_BENCH_MIB")); err == nil && v > 0 {
		mib = v
	}
	p, err := fixture.Build(b.TempDir(), fixture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, mib<<20)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	if err := os.MkdirAll(filepath.Join(p.Scratch, "recordings"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Scratch, "recordings", "large.bin"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	src := share.Source{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project}
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.Run("push", func(b *testing.B) {
		for range b.N {
			st, err := store.OpenEnv(ctx, b.TempDir(), os.Getenv)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := share.Push(ctx, st, src, share.PushOptions{Replay: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	st, err := store.OpenEnv(ctx, b.TempDir(), os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := share.Push(ctx, st, src, share.PushOptions{Replay: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.Run("pull", func(b *testing.B) {
		dest := b.TempDir()
		for i := range b.N {
			if _, err := share.Pull(ctx, st, share.PullOptions{Into: filepath.Join(dest, strconv.Itoa(i)), Repo: p.Project}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
