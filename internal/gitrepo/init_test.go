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

// InitNew makes a repository in a missing or empty real directory, and refuses
// a link, a file or a directory with anything in it, writing nothing there.
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
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	_, err = InitNew(filepath.Join(dir, "empty"), nil)
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(dir, "empty", ".git"))

	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.Symlink(other, filepath.Join(dir, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "full"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "full", ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	for _, name := range []string{"link", "full", "file"} {
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
