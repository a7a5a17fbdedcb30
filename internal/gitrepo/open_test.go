package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenResolvesAlternates(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "src")
	repo, err := git.PlainInit(src, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "f"), []byte("hi\n"), 0o644))
	w, err := repo.Worktree()
	require.NoError(t, err)
	_, err = w.Add("f")
	require.NoError(t, err)
	sig := &object.Signature{Name: "t", Email: "t@t", When: time.Date(2026, 4, 7, 0, 0, 0, 0, time.UTC)}
	h, err := w.Commit("one", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)

	dst := filepath.Join(base, "dst")
	_, err = git.PlainInit(dst, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dst, ".git", "objects", "info", "alternates"), []byte(filepath.Join(src, ".git", "objects")+"\n"), 0o644))

	plain, err := git.PlainOpen(dst)
	require.NoError(t, err)
	_, err = plain.CommitObject(h)
	require.Error(t, err, "go-git's PlainOpen does not follow absolute alternates")

	require.NoError(t, os.MkdirAll(filepath.Join(dst, "sub"), 0o755))
	opened, err := Open(filepath.Join(dst, "sub"))
	require.NoError(t, err)
	c, err := opened.CommitObject(h)
	require.NoError(t, err)
	assert.Equal(t, "one", c.Message)

	_, err = Open(t.TempDir())
	assert.Error(t, err)
}

// chrootsOf gives the roots osfs.New gives for the working tree and its .git:
// plain, the project reached through a link, .git a link (inside and out of
// the project), a dangling .git link, no .git, no project.
func TestChrootsOfEqualsOsfsNew(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(p string) { require.NoError(t, os.MkdirAll(filepath.Join(base, p), 0o755)) }
	link := func(target, p string) { require.NoError(t, os.Symlink(target, filepath.Join(base, p))) }
	mk("plain/.git")
	link("plain", "via")
	mk("gitlink/sub")
	mk("elsewhere/repo.git")
	link(filepath.Join(base, "elsewhere/repo.git"), "gitlink/.git")
	mk("inner/real.git")
	link("real.git", "inner/.git")
	mk("dangling")
	link("missing", "dangling/.git")
	mk("nogit")
	link("gitlink", "via2")
	for _, dir := range []string{"plain", "via", "gitlink", "inner", "dangling", "nogit", "absent", "via2", "via/.git"} {
		root := filepath.Join(base, dir)
		wt, dg := chrootsOf(root)
		assert.Equal(t, osfs.New(root).Root(), wt.Root(), dir)
		assert.Equal(t, osfs.New(filepath.Join(root, ".git")).Root(), dg.Root(), dir)
	}
}
