package agent

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/require"
)

// BenchmarkRecordedReplay100 replays a fully recorded 100-dispatch run (50
// implementers that commit, 50 reviewers that write findings and receipts) from its
// recordings into the worktree the run started from, with 0 agent calls, and checks
// that it ends with the original tree.
func BenchmarkRecordedReplay100(b *testing.B) {
	t := &testing.T{}
	work, dir := b.TempDir(), b.TempDir()
	repo := initRepo(t, work)
	head, err := repo.Head()
	require.NoError(b, err)
	var reqs []Request
	for i := 1; i <= 50; i++ {
		reqs = append(reqs,
			requestIn(t, dir, work, 2*i-1, "implementer", "build-implementer", intp(i), fmt.Sprintf("Implement task %d.\n", i)),
			requestIn(t, dir, work, 2*i, "reviewer", "build-reviewer", intp(i), fmt.Sprintf("Review task %d.\n", i)))
	}
	live, err := New(SpecSim, Options{})
	require.NoError(b, err)
	rec := &Runner{Agent: live, Store: OpenStore(dir)}
	for _, req := range reqs {
		_, err := rec.Run(context.Background(), req)
		require.NoError(b, err)
	}
	want := headCommit(t, work).TreeHash
	var calls atomic.Int64
	replayer := NewRunner(&recordedAgent{store: OpenStore(dir)}, OpenStore(dir))
	replayer.Calls = &calls
	wt, err := repo.Worktree()
	require.NoError(b, err)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		require.NoError(b, wt.Reset(&git.ResetOptions{Commit: head.Hash(), Mode: git.HardReset}))
		b.StartTimer()
		for _, req := range reqs {
			if _, err := replayer.Run(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if got := headCommit(t, work).TreeHash; got != want || calls.Load() != 0 {
			b.Fatalf("tree %s (want %s), %d agent calls", got, want, calls.Load())
		}
		b.StartTimer()
	}
}
