package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/manifest"
)

// waveImplementer is an implementer of a parallel wave as upstream runs them: every
// implementer of the wave works in the one worktree and commits its task there
// ("feat: implement task N"). With a barrier, all of them are running before any
// commits, so their windows overlap; with committed, none returns before all have
// committed: go-git rewrites a ref in place, so a HEAD read while another
// implementer's commit moves it could find the file empty (the git binary
// upstream's agents use renames a new ref into place, which no reader sees torn).
type waveImplementer struct {
	barrier   *sync.WaitGroup
	committed *sync.WaitGroup
	commit    *sync.Mutex // go-git's index is not written by two at once
}

func (a *waveImplementer) Name() string { return "wave-implementer" }

func (a *waveImplementer) Run(_ context.Context, req Request) (Response, error) {
	if a.barrier != nil {
		a.barrier.Done()
		a.barrier.Wait()
	}
	if a.committed != nil {
		defer a.committed.Wait()
		defer a.committed.Done()
	}
	a.commit.Lock()
	defer a.commit.Unlock()
	repo, err := git.PlainOpen(req.WorkDir)
	if err != nil {
		return Response{}, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return Response{}, err
	}
	name := fmt.Sprintf("task-%d.go", *req.Task)
	if err := os.WriteFile(filepath.Join(req.WorkDir, name), []byte("package task\n"), 0o644); err != nil {
		return Response{}, err
	}
	if _, err := wt.Add(name); err != nil {
		return Response{}, err
	}
	sig := &object.Signature{Name: "Agent", Email: "agent@example.com", When: time.Date(2026, 4, 7, 15, *req.Task, 0, 0, time.UTC)}
	if _, err := wt.Commit(fmt.Sprintf("feat: implement task %d", *req.Task), &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true}); err != nil {
		return Response{}, err
	}
	return Response{Status: manifest.StatusCompleted, Summary: "done", Agent: a.Name()}, nil
}

// wave returns the requests of a two-implementer wave sharing one worktree.
func wave(t *testing.T) []Request {
	t.Helper()
	dir, work := t.TempDir(), t.TempDir()
	initRepo(t, work)
	return []Request{
		requestIn(t, dir, work, 11, "build-implementer", "build-implementer", intp(1), "Implement task 1.\n"),
		requestIn(t, dir, work, 12, "build-implementer", "build-implementer", intp(2), "Implement task 2.\n"),
	}
}

func TestParallelWaveCommitsAreAWaveEffect(t *testing.T) {
	t.Parallel()
	reqs := wave(t)
	store := OpenStore(reqs[0].DispatchDir)
	var barrier, committed sync.WaitGroup
	barrier.Add(len(reqs))
	committed.Add(len(reqs))
	ag := &waveImplementer{barrier: &barrier, committed: &committed, commit: &sync.Mutex{}}
	r := NewRunner(ag, store)
	var wg sync.WaitGroup
	for _, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Run(context.Background(), req)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	for _, req := range reqs {
		rec, ok, err := store.Lookup(Key(req.Template, req.Body))
		require.NoError(t, err)
		require.True(t, ok)
		require.NotNil(t, rec.Effects)
		assert.True(t, rec.Effects.Wave, "%s: its commits cannot be told apart from its wave's", req.ID())
	}

	// Never re-applied alone: the recorded agent fails closed, a live one runs it again.
	offline := NewRunner(&recordedAgent{store: store}, store)
	_, err := offline.Run(context.Background(), reqs[0])
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrStale))
	assert.Contains(t, err.Error(), "wave effect")
	live := NewRunner(&waveImplementer{commit: &sync.Mutex{}}, store)
	resp, err := live.Run(context.Background(), reqs[0])
	require.NoError(t, err)
	assert.False(t, resp.Reused)
	assert.Contains(t, resp.LiveReason, "wave effect")
}

func TestSequentialWaveCommitsAreEachDispatchsOwn(t *testing.T) {
	t.Parallel()
	reqs := wave(t)
	store := OpenStore(reqs[0].DispatchDir)
	r := NewRunner(&waveImplementer{commit: &sync.Mutex{}}, store)
	var heads []string
	for _, req := range reqs {
		resp, err := r.Run(context.Background(), req)
		require.NoError(t, err)
		require.NotNil(t, resp.Effects)
		assert.False(t, resp.Effects.Wave)
		heads = append(heads, resp.Effects.HeadAfter)
	}
	want := headCommit(t, reqs[0].WorkDir).TreeHash

	// Replayed from the start, each recording re-applies its own commit, in order.
	repo, err := git.PlainOpen(reqs[0].WorkDir)
	require.NoError(t, err)
	first, err := repo.CommitObject(headCommit(t, reqs[0].WorkDir).ParentHashes[0])
	require.NoError(t, err)
	base := first.ParentHashes[0]
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.Reset(&git.ResetOptions{Commit: base, Mode: git.HardReset}))
	offline := NewRunner(&recordedAgent{store: store}, store)
	for i, req := range reqs {
		resp, err := offline.Run(context.Background(), req)
		require.NoError(t, err)
		assert.True(t, resp.Reused)
		assert.Equal(t, heads[i], headCommit(t, req.WorkDir).Hash.String())
	}
	assert.Equal(t, want, headCommit(t, reqs[0].WorkDir).TreeHash)
	// The repository the replayed effects wrote, and its index, read the same
	// in git and go-git; the index agrees with HEAD and the files: git sees a
	// clean tree.
	gitcheck.Repo(t, reqs[0].WorkDir)
	gitcheck.Index(t, reqs[0].WorkDir, filepath.Join(reqs[0].WorkDir, ".git", "index"))
	if gitBin, ok := testtools.GitIfPresent(t); ok {
		cmd := exec.Command(gitBin, "-C", reqs[0].WorkDir, "status", "--porcelain")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		require.NoError(t, err)
		assert.Empty(t, string(out))
	}
}
