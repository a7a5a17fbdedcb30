package share_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/share"
)

func gitBin(t *testing.T, dir string, args ...string) string {
	t.Helper()
	testtools.Git(t, "git binary not installed: the reference check needs it")
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// TestBundleGitAcceptsOurs: git bundle verify accepts the bundle of a run's
// checkpoints, and git fetch from it gets every ref with a clean fsck.
func TestBundleGitAcceptsOurs(t *testing.T) {
	t.Parallel()
	p, _ := buildRun(t)
	st := filesystem.NewStorage(osfs.New(p.Shadow), cache.NewObjectLRUDefault())
	var buf bytes.Buffer
	refs, err := share.WriteBundle(&buf, st)
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	dir := t.TempDir()
	file := filepath.Join(dir, "run.bundle")
	require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o644))
	repo := filepath.Join(dir, "repo")
	gitBin(t, dir, "init", "-q", "--bare", repo)
	out := gitBin(t, repo, "bundle", "verify", file)
	assert.Contains(t, out, "is okay")
	gitBin(t, repo, "fetch", "-q", file, "refs/*:refs/*")
	gitcheck.Repo(t, repo)
	for _, r := range refs {
		got := strings.TrimSpace(gitBin(t, repo, "rev-parse", r.Name))
		assert.Equal(t, r.Hash.String(), got, r.Name)
	}
}

// TestBundleReadsGits: a bundle git bundle create makes (v2 and v3) unbundles
// into go-git storage with every ref and object.
func TestBundleReadsGits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	gitBin(t, dir, "init", "-q", "-b", "main", repo)
	for i, name := range []string{"a.txt", "b.txt", "c.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), bytes.Repeat([]byte{byte('a' + i)}, 100+i), 0o644))
		gitBin(t, repo, "add", name)
		gitBin(t, repo, "commit", "-q", "-m", "add "+name)
	}
	gitBin(t, repo, "tag", "-a", "-m", "cp", "checkpoint-1", "HEAD~1")
	gitBin(t, repo, "branch", "side", "HEAD~2")
	for _, version := range []string{"2", "3"} {
		file := filepath.Join(dir, "v"+version+".bundle")
		gitBin(t, repo, "bundle", "create", "-q", "--version="+version, file, "--all")
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		st := memory.NewStorage()
		refs, err := share.Unbundle(st, bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, version)
		names := map[string]string{}
		for _, r := range refs {
			names[r.Name] = r.Hash.String()
		}
		for _, ref := range []string{"refs/heads/main", "refs/heads/side", "refs/tags/checkpoint-1"} {
			assert.Equal(t, strings.TrimSpace(gitBin(t, repo, "rev-parse", ref)), names[ref], ref)
		}
		// Into a repository on disk (git's packs may hold deltas: go-git's parser takes them).
		fst := filesystem.NewStorage(osfs.New(t.TempDir()), cache.NewObjectLRUDefault())
		_, err = share.Unbundle(fst, bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, version)
		_, err = fst.EncodedObject(plumbing.AnyObject, plumbing.NewHash(names["refs/heads/main"]))
		require.NoError(t, err)
		// Truncated and prerequisite bundles are refused.
		_, err = share.Unbundle(memory.NewStorage(), bytes.NewReader(data[:len(data)-30]), int64(len(data)-30))
		assert.Error(t, err)
	}
	thin := filepath.Join(dir, "thin.bundle")
	gitBin(t, repo, "bundle", "create", "-q", thin, "HEAD~1..main")
	data, err := os.ReadFile(thin)
	require.NoError(t, err)
	_, err = share.Unbundle(memory.NewStorage(), bytes.NewReader(data), int64(len(data)))
	require.Error(t, err, "a thin bundle needs its prerequisites in the storage")
	assert.Contains(t, err.Error(), "needs commit")
}

// TestUnbundleStoresOurPackAsItIs: our bundle (whole objects) goes into a
// repository on disk as one pack and its index, which git verifies; bytes
// after the pack's checksum are refused with nothing stored.
func TestUnbundleStoresOurPackAsItIs(t *testing.T) {
	t.Parallel()
	p, _ := buildRun(t)
	var buf bytes.Buffer
	refs, err := share.WriteBundle(&buf, filesystem.NewStorage(osfs.New(p.Shadow), cache.NewObjectLRUDefault()))
	require.NoError(t, err)
	dir := t.TempDir()
	gitBin(t, dir, "init", "-q", "--bare", "repo")
	repo := filepath.Join(dir, "repo")
	st := filesystem.NewStorage(osfs.New(repo), cache.NewObjectLRUDefault())
	_, err = share.Unbundle(st, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	packs, err := filepath.Glob(filepath.Join(repo, "objects", "pack", "pack-*.idx"))
	require.NoError(t, err)
	require.Len(t, packs, 1)
	gitBin(t, repo, "verify-pack", packs[0])
	for _, r := range refs {
		assert.Contains(t, gitBin(t, repo, "cat-file", "-t", r.Hash.String()), "commit")
	}

	bad := append(bytes.Clone(buf.Bytes()), "trailing"...)
	repo2 := filepath.Join(dir, "repo2")
	gitBin(t, dir, "init", "-q", "--bare", "repo2")
	_, err = share.Unbundle(filesystem.NewStorage(osfs.New(repo2), cache.NewObjectLRUDefault()), bytes.NewReader(bad), int64(len(bad)))
	require.Error(t, err)
	left, _ := filepath.Glob(filepath.Join(repo2, "objects", "pack", "*"))
	assert.Empty(t, left, "nothing stored")
}
