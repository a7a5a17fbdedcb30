package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// InitNew makes a repository in a missing or real directory, and refuses a
// link, a file or a directory with a .git already (a file naming another
// repository, a link to another's git dir), writing nothing there.
func TestInitNewProvesTheDirectoryFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	repo, err := InitNew(filepath.Join(dir, "missing"), &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("feat/x")},
	})
	require.NoError(t, err)
	head, err := repo.Storer.Reference(plumbing.HEAD)
	require.NoError(t, err)
	assert.Equal(t, plumbing.ReferenceName("refs/heads/feat/x"), head.Target())
	require.NoError(t, os.Mkdir(filepath.Join(dir, "files"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "files", "a.go"), nil, 0o644))
	_, err = InitNew(filepath.Join(dir, "files"), nil)
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(dir, "files", ".git"))

	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.Symlink(other, filepath.Join(dir, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "full"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "full", ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dotlink"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "files", ".git"), filepath.Join(dir, "dotlink", ".git")))
	for _, name := range []string{"link", "full", "file", "dotlink"} {
		_, err := InitNew(filepath.Join(dir, name), nil)
		assert.ErrorIs(t, err, ErrNotFresh, name)
	}
	entries, err := os.ReadDir(other)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")
	data, err := os.ReadFile(filepath.Join(dir, "full", ".git"))
	require.NoError(t, err)
	assert.Equal(t, "gitdir: /elsewhere\n", string(data))
}
