package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// recordedRun is a live two-dispatch run (an implementer that commits, a reviewer
// that writes findings and a receipt) with its recordings, and the state it ended in.
type recordedRun struct {
	work, dir string
	reqs      []Request
	initial   plumbing.Hash
	tree      string
	files     map[string][]byte
}

func recordRun(t *testing.T) recordedRun {
	t.Helper()
	work, dir := t.TempDir(), t.TempDir()
	repo := initRepo(t, work)
	head, err := repo.Head()
	require.NoError(t, err)
	reqs := []Request{
		requestIn(t, dir, work, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n"),
		requestIn(t, dir, work, 22, "reviewer", "build-reviewer", intp(3), "Review task 3.\nIt must work.\n"),
	}
	live, err := New(SpecSim, Options{})
	require.NoError(t, err)
	r := &Runner{Agent: live, Store: OpenStore(dir)}
	for _, req := range reqs {
		resp, err := r.Run(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)
	}
	return recordedRun{work: work, dir: dir, reqs: reqs, initial: head.Hash(),
		tree: headCommit(t, work).TreeHash.String(), files: dirFiles(t, dir)}
}

// dirFiles returns the dispatch dir's top-level files but the recordings.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = data
		}
	}
	return out
}

// rollBack puts the worktree back on the initial commit and removes what the
// dispatches wrote into the dispatch dir.
func (rr recordedRun) rollBack(t *testing.T) {
	t.Helper()
	repo, err := git.PlainOpen(rr.work)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.Reset(&git.ResetOptions{Commit: rr.initial, Mode: git.HardReset}))
	require.NoError(t, os.Remove(filepath.Join(rr.dir, "22-build-reviewer-findings.md")))
	require.NoError(t, os.Remove(filepath.Join(rr.dir, manifest.ReceiptLedgerFile)))
}

func TestRecordedReplayIsFaithful(t *testing.T) {
	t.Parallel()
	rr := recordRun(t)
	repo, err := git.PlainOpen(rr.work)
	require.NoError(t, err)
	ref, err := repo.Reference(plumbing.ReferenceName(EffectsRefPrefix+Key(rr.reqs[0].Template, rr.reqs[0].Body)), true)
	require.NoError(t, err, "the implementer's commit is kept under its own ref")
	assert.Equal(t, headCommit(t, rr.work).Hash, ref.Hash())
	assert.Contains(t, rr.files, "22-build-reviewer-findings.md")
	assert.Contains(t, rr.files, manifest.ReceiptLedgerFile)

	rr.rollBack(t)
	require.NotEqual(t, rr.tree, headCommit(t, rr.work).TreeHash.String())
	var calls atomic.Int64
	replayer := &Runner{Agent: &recordedAgent{store: OpenStore(rr.dir)}, Store: OpenStore(rr.dir), Calls: &calls}
	for i := 0; i < 2; i++ { // a second replay finds everything applied and changes nothing
		for _, req := range rr.reqs {
			resp, err := replayer.Run(context.Background(), req)
			require.NoError(t, err)
			assert.True(t, resp.Reused)
		}
		assert.Equal(t, rr.tree, headCommit(t, rr.work).TreeHash.String(), "same tree as the original")
		assert.Equal(t, ref.Hash(), headCommit(t, rr.work).Hash, "the very commit recorded: a fast-forward")
		assert.Equal(t, rr.files, dirFiles(t, rr.dir), "same dispatch-dir files, byte for byte")
	}
	assert.Equal(t, int64(0), calls.Load())
}

// commitOther commits a file the recording never saw.
func commitOther(t *testing.T, work string) {
	t.Helper()
	repo, err := git.PlainOpen(work)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "other.txt"), []byte("other\n"), 0o644))
	_, err = wt.Add("other.txt")
	require.NoError(t, err)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 4, 7, 14, 30, 0, 0, time.UTC)}
	_, err = wt.Commit("other", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
}

func TestStaleRecordingFailsClosed(t *testing.T) {
	t.Parallel()
	rr := recordRun(t)
	rr.rollBack(t)
	commitOther(t, rr.work)
	before := headCommit(t, rr.work).Hash
	replayer := &Runner{Agent: &recordedAgent{store: OpenStore(rr.dir)}, Store: OpenStore(rr.dir)}
	_, err := replayer.Run(context.Background(), rr.reqs[0])
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrStale))
	assert.Contains(t, err.Error(), "input_tree changed")
	assert.Contains(t, err.Error(), "21-build-implementer")
	assert.Equal(t, before, headCommit(t, rr.work).Hash, "nothing applied")
	assert.NoFileExists(t, filepath.Join(rr.dir, "22-build-reviewer-findings.md"))

	// A live runner does not reuse the stale recording: it runs the dispatch again.
	live, err := New(SpecSim, Options{})
	require.NoError(t, err)
	var calls atomic.Int64
	resp, err := (&Runner{Agent: live, Store: OpenStore(rr.dir), Calls: &calls}).Run(context.Background(), rr.reqs[0])
	require.NoError(t, err)
	assert.False(t, resp.Reused)
	assert.Equal(t, int64(1), calls.Load())
}

func TestReuseModes(t *testing.T) {
	t.Parallel()
	rr := recordRun(t)
	rr.rollBack(t)
	commitOther(t, rr.work)
	offline := &recordedAgent{store: OpenStore(rr.dir)}
	// template: the input tree is ignored; the recorded commits are rebuilt on HEAD.
	resp, err := (&Runner{Agent: offline, Store: OpenStore(rr.dir), Reuse: ReuseTemplate}).Run(context.Background(), rr.reqs[0])
	require.NoError(t, err)
	assert.True(t, resp.Reused)
	assert.Equal(t, SimCommitMessage("implementer", intp(3)), headCommit(t, rr.work).Message)
	assert.FileExists(t, filepath.Join(rr.work, "other.txt"), "the recorded changes go on top of the current tree")
	assert.FileExists(t, filepath.Join(rr.work, filepath.FromSlash(SimFile("implementer", intp(3)))))

	// never: always live, even with a matching recording.
	rr2 := recordRun(t)
	live, err := New(SpecSim, Options{})
	require.NoError(t, err)
	var calls atomic.Int64
	resp, err = (&Runner{Agent: live, Store: OpenStore(rr2.dir), Calls: &calls, Reuse: ReuseNever}).Run(context.Background(), rr2.reqs[1])
	require.NoError(t, err)
	assert.False(t, resp.Reused)
	assert.Equal(t, int64(1), calls.Load())

	for _, s := range []string{"", "exact", "template", "never"} {
		_, err := ParseReuse(s)
		assert.NoError(t, err, s)
	}
	_, err = ParseReuse("sometimes")
	assert.ErrorContains(t, err, "give exact, template or never")
}

func TestEffectFilesCannotChooseWhereReplayWrites(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 22, "reviewer", "build-reviewer", intp(3), "x", false)
	for _, name := range []string{"../22-build-reviewer-x", "21-build-implementer-x", "22-build-reviewer-/x", "other"} {
		err := applyEffectsWith(nil, req, &Effects{Files: []EffectFile{{Name: "22-build-reviewer-ok", Content: "ok"}, {Name: name, Content: "x"}}})
		assert.ErrorContains(t, err, "is not a file of dispatch", name)
	}
	assert.NoFileExists(t, filepath.Join(req.DispatchDir, "22-build-reviewer-ok"), "nothing half-applied")
	err := applyEffectsWith(nil, req, &Effects{Receipts: []string{`{"dispatch_id":"21-build-implementer"}`}})
	assert.ErrorContains(t, err, "not a receipt of dispatch 22-build-reviewer")
}

func TestRecordedReplayInAnotherRepository(t *testing.T) {
	t.Parallel()
	rr := recordRun(t)
	// A fresh repository with the same initial commit (pinned dates) and none of the
	// recorded commits: the recording brings their objects along.
	other := t.TempDir()
	initRepo(t, other)
	require.Equal(t, rr.initial, headCommit(t, other).Hash)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, ResponsesDir), os.DirFS(filepath.Join(rr.dir, ResponsesDir))))
	replayer := &Runner{Agent: &recordedAgent{store: OpenStore(dir)}, Store: OpenStore(dir)}
	for _, req := range rr.reqs {
		req.WorkDir, req.DispatchDir = other, dir
		resp, err := replayer.Run(context.Background(), req)
		require.NoError(t, err)
		assert.True(t, resp.Reused)
	}
	assert.Equal(t, rr.tree, headCommit(t, other).TreeHash.String())
	want := dirFiles(t, rr.dir)
	for name := range want {
		if filepath.Ext(name) == ".md" && name != "22-build-reviewer-findings.md" {
			delete(want, name) // the dispatch files themselves are written by replay, not the agent
		}
	}
	assert.Equal(t, want, dirFiles(t, dir))
}

func TestTamperedEffectObjectIsRefused(t *testing.T) {
	t.Parallel()
	repo := initRepo(t, t.TempDir())
	_, err := storeObjectsInto(repo, []EffectObject{{Hash: "0123456789012345678901234567890123456789", Type: "blob", Data: "aGVsbG8K"}}, map[plumbing.Hash]plumbing.EncodedObject{})
	assert.ErrorContains(t, err, "the content hashes to")
	_, err = storeObjectsInto(repo, []EffectObject{{Hash: "0123456789012345678901234567890123456789", Type: "tag", Data: ""}}, map[plumbing.Hash]plumbing.EncodedObject{})
	assert.ErrorContains(t, err, "is not commit, tree or blob")
}

func TestReplayKeepsUnrelatedChangesAndRefusesTouchedOnes(t *testing.T) {
	t.Parallel()
	rr := recordRun(t)
	rr.rollBack(t)
	// An untracked file elsewhere stays; the replay still fast-forwards.
	require.NoError(t, os.WriteFile(filepath.Join(rr.work, "notes.txt"), []byte("mine\n"), 0o644))
	// A local edit of the very file the recorded commit writes is refused, nothing applied.
	simPath := filepath.Join(rr.work, filepath.FromSlash(SimFile("implementer", intp(3))))
	require.NoError(t, os.MkdirAll(filepath.Dir(simPath), 0o755))
	require.NoError(t, os.WriteFile(simPath, []byte("local edit\n"), 0o644))
	replayer := &Runner{Agent: &recordedAgent{store: OpenStore(rr.dir)}, Store: OpenStore(rr.dir)}
	_, err := replayer.Run(context.Background(), rr.reqs[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has uncommitted changes")
	assert.Equal(t, rr.initial, headCommit(t, rr.work).Hash, "HEAD not moved")
	data, err := os.ReadFile(simPath)
	require.NoError(t, err)
	assert.Equal(t, "local edit\n", string(data), "the local edit is kept")

	require.NoError(t, os.Remove(simPath))
	resp, err := replayer.Run(context.Background(), rr.reqs[0])
	require.NoError(t, err)
	assert.True(t, resp.Reused)
	assert.Equal(t, rr.tree, headCommit(t, rr.work).TreeHash.String())
	data, err = os.ReadFile(filepath.Join(rr.work, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data))
}

func TestEffectsRecordedUnderAnotherSeqAreRekeyed(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 37, "reviewer", "build-reviewer", intp(3), "x", false)
	names, data, receipts, err := checkEffectFiles(req, &Effects{
		Files:    []EffectFile{{Name: "25-build-reviewer-findings.md", Content: "finding 1\n"}},
		Receipts: []string{`{"dispatch_id": "25-build-reviewer", "phase": "3", "verdict": "PASS"}`},
	})
	require.NoError(t, err)
	assert.Equal(t, "37-build-reviewer-findings.md", names[0].Name)
	assert.Equal(t, "finding 1\n", string(data[0]))
	assert.Equal(t, `{"dispatch_id": "37-build-reviewer", "phase": "3", "verdict": "PASS"}`, receipts[0])

	_, _, _, err = checkEffectFiles(req, &Effects{Receipts: []string{`{"dispatch_id": "25-build-implementer"}`}})
	assert.ErrorContains(t, err, "not a receipt of dispatch 37-build-reviewer")
	_, _, _, err = checkEffectFiles(req, &Effects{Files: []EffectFile{{Name: "x5-build-reviewer-a", Content: "x"}}})
	assert.ErrorContains(t, err, "is not a file of dispatch")
}
