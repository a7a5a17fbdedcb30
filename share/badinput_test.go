package share_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

// TestConcurrentPushesOfOneRun: several pushes of one run at once all succeed,
// and the store ends with one whole index that a pull turns into a run.
func TestConcurrentPushesOfOneRun(t *testing.T) {
	t.Parallel()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, src := buildRun(t)
			b := open(t)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			runs := make([]string, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
					errs[i] = err
					if err == nil {
						runs[i] = res.Run
					}
				}()
			}
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "push %d", i)
				assert.Equal(t, runs[0], runs[i])
			}
			ids, err := share.Runs(ctx, b)
			require.NoError(t, err)
			assert.Equal(t, []string{runs[0]}, ids)
			_, err = share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(t.TempDir(), "d"), Repo: t.TempDir()})
			require.NoError(t, err)
		})
	}
}

// TestPullRefusesCorruptOrMissingObjects: nothing is written when an object
// does not match its hash or is gone.
func TestPullRefusesCorruptOrMissingObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := buildRun(t)
	root := t.TempDir()
	b, err := store.OpenEnv(ctx, root, os.Getenv)
	require.NoError(t, err)
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	ixData, _, err := b.Get(ctx, share.IndexKey(res.Run), store.MaxObject)
	require.NoError(t, err)
	ix, err := share.ParseIndex(ixData, "index")
	require.NoError(t, err)
	victim := share.BlobKey(ix.Files[0].SHA256)
	path := filepath.Join(root, filepath.FromSlash(victim))
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	dest := t.TempDir()
	into := filepath.Join(dest, "run")
	require.NoError(t, os.WriteFile(path, append([]byte("tampered "), good...), 0o644))
	_, err = share.Pull(ctx, b, share.PullOptions{Into: into, Repo: t.TempDir()})
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), victim)
	assert.Contains(t, err.Error(), "push the run again")
	assertEmptyDir(t, dest)

	require.NoError(t, os.Remove(path))
	_, err = share.Pull(ctx, b, share.PullOptions{Into: into, Repo: t.TempDir()})
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), "is missing")
	assertEmptyDir(t, dest)

	// A push repairs the store: the missing object is uploaded again.
	again, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	assert.Equal(t, 1, again.New)
	_, err = share.Pull(ctx, b, share.PullOptions{Into: into, Repo: t.TempDir()})
	require.NoError(t, err)
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written in %s", dir)
}

// TestPullRefusesBadIndexes: an index that names a path outside the run's
// folders, or the shadow repository's git files, is refused before anything
// is written.
func TestPullRefusesBadIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	blob := []byte("x")
	sum := sha256.Sum256(blob)
	h := hex.EncodeToString(sum[:])
	require.NoError(t, b.Put(ctx, share.BlobKey(h), blob))
	const run = "1775430161-0123456789ab"
	for _, p := range []string{"../escape", "memory/../../x", "/etc/passwd", "checkpoints/config", "memory/a/../b", "other/x", "memory/./x", "memory//x"} {
		ix := `{"format":2,"run":"` + run + `","session":"1775430161","project":"0123456789abcdef","project_id":"id:0123456789abcdef0123456789abcdef","manifest":"memory/d/manifest.jsonl",` +
			`"files":[{"path":"memory/d/manifest.jsonl","mode":"0644","size":1,"sha256":"` + h + `"},` +
			`{"path":` + quote(p) + `,"mode":"0644","size":1,"sha256":"` + h + `"}],"checkpoints":null}`
		require.NoError(t, b.Put(ctx, share.IndexKey(run), []byte(ix)))
		dest := t.TempDir()
		_, err := share.Pull(ctx, b, share.PullOptions{Run: run, Into: filepath.Join(dest, "run"), Repo: t.TempDir()})
		require.ErrorIs(t, err, share.ErrBadIndex, p)
		assert.Contains(t, err.Error(), "files[1]", p)
		assertEmptyDir(t, dest)
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// TestPullDestinationMustBeNewOrEmpty: an existing file or a non-empty
// directory is never written into; an empty directory is.
func TestPullDestinationMustBeNewOrEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := buildRun(t)
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	_, err = share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep"), []byte("mine"), 0o644))
	_, err = share.Pull(ctx, b, share.PullOptions{Into: full, Repo: t.TempDir()})
	require.ErrorIs(t, err, share.ErrDestination)
	data, err := os.ReadFile(filepath.Join(full, "keep"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
	_, err = share.Pull(ctx, b, share.PullOptions{Into: "relative/dir", Repo: t.TempDir()})
	require.ErrorIs(t, err, share.ErrDestination)
	empty := t.TempDir()
	_, err = share.Pull(ctx, b, share.PullOptions{Into: empty, Repo: t.TempDir()})
	require.NoError(t, err)

	// No runs / several runs / an unknown run.
	nb, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	_, err = share.Pull(ctx, nb, share.PullOptions{Into: filepath.Join(t.TempDir(), "x")})
	require.ErrorIs(t, err, share.ErrNoRun)
	_, err = share.Pull(ctx, b, share.PullOptions{Run: "1-000000000000", Into: filepath.Join(t.TempDir(), "x")})
	require.ErrorIs(t, err, share.ErrNoRun)
	_, err = share.Pull(ctx, b, share.PullOptions{Run: "../x", Into: filepath.Join(t.TempDir(), "x")})
	require.ErrorIs(t, err, share.ErrNoRun)
}

// TestPushLeavesLinksOut: a symlink in the scratch dir is listed as skipped,
// never followed.
func TestPushLeavesLinksOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, src := buildRun(t)
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("do not share"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(p.Scratch, "handoff-9-to-10.md")))
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: "test"})
	require.NoError(t, err)
	assert.Contains(t, res.Skipped, filepath.Join(p.Scratch, "handoff-9-to-10.md"))
	into := filepath.Join(t.TempDir(), "d")
	pr, err := share.Pull(ctx, b, share.PullOptions{Into: into})
	require.NoError(t, err)
	_, err = os.Lstat(filepath.Join(pr.Scratch, "handoff-9-to-10.md"))
	assert.True(t, os.IsNotExist(err))
}

// TestParseIndexRefusesCollisions: a file listed inside another file, a
// path twice, or a run id not of its session. Names differing only in case
// are two files (as on the filesystem that pushed them).
func TestParseIndexRefusesCollisions(t *testing.T) {
	t.Parallel()
	h := strings.Repeat("a", 64)
	file := func(p string) string {
		return `{"path":"` + p + `","mode":"0644","size":1,"sha256":"` + h + `"}`
	}
	index := func(run, session string, files ...string) []byte {
		return []byte(`{"format":2,"run":"` + run + `","session":"` + session + `","project":"0123456789abcdef","project_id":"git:0123456789abcdef0123456789abcdef01234567","manifest":"memory/d/manifest.jsonl","files":[` +
			strings.Join(append([]string{file("memory/d/manifest.jsonl")}, files...), ",") + `]}`)
	}
	_, err := share.ParseIndex(index("1-0123456789ab", "1"), "ok")
	require.NoError(t, err)
	_, err = share.ParseIndex(index("1-0123456789ab", "1", file("memory/A"), file("memory/a"), file("memory/x:y")), "case")
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"file inside a file": index("1-0123456789ab", "1", file("memory/a"), file("memory/a/b")),
		"twice":              index("1-0123456789ab", "1", file("memory/a"), file("memory/a")),
		"foreign session":    index("1-0123456789ab", "2"),
	} {
		_, err := share.ParseIndex(data, "idx")
		assert.ErrorIs(t, err, share.ErrBadIndex, name)
	}
}

// TestPullRefusesABadBundle: a checkpoints object whose hash matches but that
// is not a complete bundle fails the pull with nothing written.
func TestPullRefusesABadBundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, err := store.OpenEnv(ctx, t.TempDir(), os.Getenv)
	require.NoError(t, err)
	put := func(data []byte) string {
		sum := sha256.Sum256(data)
		h := hex.EncodeToString(sum[:])
		require.NoError(t, b.Put(ctx, share.BlobKey(h), data))
		return h
	}
	mh := put([]byte("{}\n"))
	bundle := []byte("# v2 git bundle\n0123456789abcdef0123456789abcdef01234567 refs/heads/main\n\nPACK garbage")
	bh := put(bundle)
	const run = "1775430161-0123456789ab"
	ix := `{"format":2,"run":"` + run + `","session":"1775430161","project":"0123456789abcdef","project_id":"id:0123456789abcdef0123456789abcdef","manifest":"memory/d/manifest.jsonl",` +
		`"files":[{"path":"memory/d/manifest.jsonl","mode":"0644","size":3,"sha256":"` + mh + `"}],` +
		`"checkpoints":{"head":"refs/heads/main","refs":[{"name":"refs/heads/main","hash":"0123456789abcdef0123456789abcdef01234567"}],"bundles":[{"size":` + strconv.Itoa(len(bundle)) + `,"sha256":"` + bh + `"}]}}`
	require.NoError(t, b.Put(ctx, share.IndexKey(run), []byte(ix)))
	dest := t.TempDir()
	_, err = share.Pull(ctx, b, share.PullOptions{Into: filepath.Join(dest, "run"), Repo: t.TempDir()})
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), "bundle")
	assertEmptyDir(t, dest)
}
