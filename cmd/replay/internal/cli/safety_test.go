package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpointRestoreKeepsTheIndex stages a file, edits it, restores an older
// checkpoint with --json, and runs the undo it prints: the index holds the staged
// version again and the file the edit.
func TestCheckpointRestoreKeepsTheIndex(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1")
	require.Equal(t, 0, r.code, r.stderr)
	repo, err := git.PlainOpen(sb.project)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	sb.write(t, "f.go", "package main // staged\n")
	staged, err := wt.Add("f.go")
	require.NoError(t, err)
	sb.write(t, "f.go", "package main // edited\n")

	r = sb.run(t, false, nil, "--json", "checkpoint", "restore", "pre-wave-1", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		IndexRef string `json:"index_ref"`
		Undo     string `json:"undo"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, "refs/replay/index/1775584800", doc.IndexRef)
	ref, err := repo.Reference(plumbing.ReferenceName(doc.IndexRef), false)
	require.NoError(t, err)
	c, err := repo.CommitObject(ref.Hash())
	require.NoError(t, err)
	f, err := c.File("f.go")
	require.NoError(t, err)
	assert.Equal(t, staged, f.Hash, "the index ref holds the staged blob")
	_, err = os.Stat(filepath.Join(sb.project, "f.go"))
	require.True(t, os.IsNotExist(err))

	undo := strings.Fields(strings.TrimPrefix(doc.Undo, "replay "))
	r = sb.run(t, false, nil, undo...)
	require.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(filepath.Join(sb.project, "f.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main // edited\n", string(data))
	repo, err = git.PlainOpen(sb.project)
	require.NoError(t, err)
	idx, err := repo.Storer.Index()
	require.NoError(t, err)
	e, err := idx.Entry("f.go")
	require.NoError(t, err)
	assert.Equal(t, staged, e.Hash)
}
