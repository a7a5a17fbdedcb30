package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteRefAndIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	gd := GitDir(dir)
	require.NotEmpty(t, gd)
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")

	require.NoError(t, WriteRef(gd, "refs/replay/pre-restore/1775440961", h))
	ref, err := repo.Reference("refs/replay/pre-restore/1775440961", false)
	require.NoError(t, err)
	assert.Equal(t, h, ref.Hash())
	assert.Error(t, WriteRef(gd, "ORIG_HEAD", h), "only refs/ and HEAD are written")
	assert.Error(t, WriteRef(gd, "config", h), "only refs/ and HEAD are written")
	assert.Error(t, WriteRef(gd, "refs/../../x", h))

	idx := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "a.txt", Hash: h}}}
	require.NoError(t, WriteIndex(gd, idx))
	got, err := repo.Storer.Index()
	require.NoError(t, err)
	require.Len(t, got.Entries, 1)
	assert.Equal(t, "a.txt", got.Entries[0].Name)

	entries, err := os.ReadDir(filepath.Join(gd, "refs", "replay", "pre-restore"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp file left behind")
	assert.Empty(t, GitDir(t.TempDir()))
}
