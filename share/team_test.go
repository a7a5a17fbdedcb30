package share_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

// TestRunIDIncludesTheProject: one session and manifest in two projects (two
// root commits, or two stored ids) give two run ids; one project gives one.
func TestRunIDIncludesTheProject(t *testing.T) {
	t.Parallel()
	m := []byte(`{"seq":1}` + "\n" + `{"seq":2}`)
	a := share.RunID("1775430161", "git:"+string(bytes.Repeat([]byte("a"), 40)), m)
	b := share.RunID("1775430161", "git:"+string(bytes.Repeat([]byte("b"), 40)), m)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, share.RunID("1775430161", "git:"+string(bytes.Repeat([]byte("a"), 40)), append(m, "\n{}"...)), "the id stays as the manifest grows")
	require.NoError(t, share.CheckRunID(a))

	dir := t.TempDir() // not a git repository: a stored random id, kept
	id1, err := share.ProjectID(dir, dir)
	require.NoError(t, err)
	id2, err := share.ProjectID(dir, dir)
	require.NoError(t, err)
	assert.Equal(t, id1, id2)
	assert.Regexp(t, `^id:[0-9a-f]{32}$`, id1)
	other, err := share.ProjectID(t.TempDir(), t.TempDir())
	require.NoError(t, err)
	assert.NotEqual(t, id1, other)
}

// TestOlderCopyNeverReplacesNewer: a copy whose manifest lacks lines the
// store holds is refused (ErrOlder, naming what would be lost); --force
// replaces it and says what was lost; a grown copy replaces it freely.
func TestOlderCopyNeverReplacesNewer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, src := buildRun(t)
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	mpath := p.ManifestPath
	old, err := os.ReadFile(mpath)
	require.NoError(t, err)
	_, err = share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	grown := append(bytes.Clone(old), []byte(`{"seq":999,"event":"note"}`+"\n")...)
	require.NoError(t, os.WriteFile(mpath, grown, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, "extra.md"), []byte("new"), 0o644))
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err, "a grown copy replaces the store's")
	assert.True(t, res.IndexWritten)

	require.NoError(t, os.WriteFile(mpath, old, 0o644)) // the older copy
	require.NoError(t, os.Remove(filepath.Join(p.Scratch, "extra.md")))
	_, err = share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.ErrorIs(t, err, share.ErrOlder)
	assert.Contains(t, err.Error(), "1 manifest line")
	assert.Contains(t, err.Error(), "memory/extra.md")
	forced, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test", Force: true})
	require.NoError(t, err)
	assert.Len(t, forced.Lost, 2)
}

// TestPullIsReHomedAndKeepsModes: a pull for a clone at another path lays
// the run under that clone's <H> with the shadow repository's worktree on
// it, says so, and an existing empty destination keeps its mode.
func TestPullIsReHomedAndKeepsModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := buildRun(t)
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	clone := filepath.Join(t.TempDir(), "elsewhere", "clone")
	into := filepath.Join(t.TempDir(), "dest")
	require.NoError(t, os.Mkdir(into, 0o751))
	pr, err := share.Pull(ctx, b, share.PullOptions{Run: res.Run, Into: into, Repo: clone})
	require.NoError(t, err)
	h := paths.ProjectHash(clone)
	assert.Equal(t, h, pr.Project)
	assert.NotEmpty(t, pr.Rehomed)
	assert.Equal(t, filepath.Join(into, h, "memory"), pr.Scratch)
	assert.Equal(t, filepath.Join(into, h, "checkpoints", h), pr.Shadow)
	cfg, err := os.ReadFile(filepath.Join(pr.Shadow, "config"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "worktree = "+clone)
	assert.Contains(t, string(cfg), "project = git:")
	st, err := os.Stat(into)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o751), st.Mode().Perm())
}

// TestHostileStoreObjectsFailFast: an object that is a FIFO fails the pull at
// once (never blocks), leaving nothing; a dead pull's stage dir is swept.
func TestHostileStoreObjectsFailFast(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := buildRun(t)
	root := t.TempDir()
	b, err := store.OpenEnv(ctx, root, os.Getenv)
	require.NoError(t, err)
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	data, _, err := b.Get(ctx, share.IndexKey(res.Run), store.MaxObject)
	require.NoError(t, err)
	ix, err := share.ParseIndex(data, "ix")
	require.NoError(t, err)
	obj := filepath.Join(root, filepath.FromSlash(share.BlobKey(ix.Files[0].SHA256)))
	require.NoError(t, os.Remove(obj))
	require.NoError(t, testtools.Mkfifo(obj, 0o644))

	dest := t.TempDir()
	dead := filepath.Join(dest, ".replay-pull-dead")
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "x"), 0o700))
	start := time.Now()
	_, err = share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(dest, "run"), Repo: t.TempDir()})
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Less(t, time.Since(start), 10*time.Second)
	assertEmptyDir(t, dest) // the dead stage dir was swept too
}

// TestAnyNameLargeFilesAndNewCheckpoints: a name with ':' and a file larger
// than a chunk round-trip; a new checkpoint uploads one bundle of only its
// new objects, and the chain pulls into every ref.
func TestAnyNameLargeFilesAndNewCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, src := buildRun(t)
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	big := make([]byte, 2*share.ChunkSize+12345)
	_, _ = rand.Read(big)
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, "big.bin"), big, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, "at 10:30.md"), []byte("colon"), 0o644))
	first, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	assert.Empty(t, first.Skipped)

	commitOnShadow(t, p.Shadow)
	second, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	assert.Equal(t, 1, second.New, "one small bundle: the new commit's objects only")
	assert.Less(t, second.NewBytes, int64(4096))

	pr, err := share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(t.TempDir(), "x"), Repo: p.Project})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(pr.Scratch, "big.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, got))
	assert.FileExists(t, filepath.Join(pr.Scratch, "at 10:30.md"))
	assert.Equal(t, refsOf(t, p.Shadow), refsOf(t, pr.Shadow))
}

// commitOnShadow adds one checkpoint commit (an empty tree change) on the
// shadow repository's HEAD branch.
func commitOnShadow(t *testing.T, dir string) {
	t.Helper()
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	head, err := st.Reference(plumbing.HEAD)
	require.NoError(t, err)
	ref, err := st.Reference(head.Target())
	require.NoError(t, err)
	parent, err := object.GetCommit(st, ref.Hash())
	require.NoError(t, err)
	sig := object.Signature{Name: "t", Email: "t@t", When: time.Unix(1775430999, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: "checkpoint: new", TreeHash: parent.TreeHash, ParentHashes: []plumbing.Hash{parent.Hash}}
	obj := st.NewEncodedObject()
	require.NoError(t, c.Encode(obj))
	h, err := st.SetEncodedObject(obj)
	require.NoError(t, err)
	require.NoError(t, st.SetReference(plumbing.NewHashReference(head.Target(), h)))
}
