package fork

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

func build(t *testing.T) (*fixture.Pipeline, *pipeline.Pipeline) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "h"))
	p, err := fixture.Build(filepath.Join(root, "fx"), fixture.Options{})
	require.NoError(t, err)
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	return p, pl
}

func TestCreateAndEntries(t *testing.T) {
	p, pl := build(t)
	verdict := filepath.Join(p.Root, "v.txt")
	require.NoError(t, os.WriteFile(verdict, []byte("FAIL\nSUMMARY: FAIL: task 1 rejected\n"), 0o644))
	before, err := fixture.Digest(p.Project)
	require.NoError(t, err)

	res, err := Create(Request{Root: pl, At: 15, Substitutions: []string{"15=v.txt"}, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now})
	require.NoError(t, err)
	assert.Equal(t, []string(nil), res.Warnings)
	after, err := fixture.Digest(p.Project)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	l, err := Chain(pl, res.Record.Session)
	require.NoError(t, err)
	es, err := l.Entries()
	require.NoError(t, err)
	assert.Len(t, es, 15, "seqs 1-14 of the parent by reference, 15 its own")
	assert.Equal(t, "FAIL: task 1 rejected", *es[15].Summary)
	assert.Equal(t, manifest.StatusCompleted, es[15].Status)
	assert.Equal(t, pl.Manifest.Entry(14).Summary, es[14].Summary)

	// A fork of the fork below the first fork seq drops the substitution.
	res2, err := Create(Request{Root: pl, Parent: res.Record.Session, At: 10, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now.Add(time.Second)})
	require.NoError(t, err)
	l2, err := Chain(pl, res2.Record.Session)
	require.NoError(t, err)
	es2, err := l2.Entries()
	require.NoError(t, err)
	assert.Len(t, es2, 9)

	tree, warns := Tree(pl)
	assert.Empty(t, warns)
	require.Len(t, tree.Children, 1)
	assert.Equal(t, res2.Record.Session, tree.Children[0].Children[0].Session)

	_, err = Chain(pl, "nosuch")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrBadFork))
	assert.Contains(t, err.Error(), res.Record.Session)
}

func TestCreateRefusesLinkedForksDir(t *testing.T) {
	p, pl := build(t)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Mkdir(elsewhere, 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(p.Scratch, ForksDir)))

	_, err := Create(Request{Root: pl, At: 15, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrBadFork))
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing is written through the link")

	// The same request with a real directory works: the guard is the only difference.
	require.NoError(t, os.Remove(filepath.Join(p.Scratch, ForksDir)))
	_, err = Create(Request{Root: pl, At: 15, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now})
	require.NoError(t, err)
}

func TestCompareRunsAndOverlay(t *testing.T) {
	p, pl := build(t)
	verdict := filepath.Join(p.Root, "v.txt")
	require.NoError(t, os.WriteFile(verdict, []byte("VERDICT: FAIL\nSUMMARY: task 1 rejected\n"), 0o644))
	res, err := Create(Request{Root: pl, At: 15, Substitutions: []string{"15=" + verdict}, Cwd: p.Root, Tmp: p.Tmp, Now: p.Now})
	require.NoError(t, err)

	orig, err := Open(pl, "")
	require.NoError(t, err)
	child, err := Open(pl, res.Record.Session)
	require.NoError(t, err)
	c, err := CompareRuns(pl, orig, child, p.Now)
	require.NoError(t, err)
	require.NotNil(t, c.Divergence)
	assert.Equal(t, 15, c.Divergence.Original.Seq)
	assert.Equal(t, "summary", c.Divergence.Reason)
	assert.Equal(t, 15, c.ResumeSeq)
	assert.Len(t, c.Divergence.Downstream, 4)

	over, err := Overlay(pl, orig, []string{"15=" + verdict}, p.Root)
	require.NoError(t, err)
	co, err := CompareRuns(pl, orig, over, p.Now)
	require.NoError(t, err)
	assert.Equal(t, c.Divergence.Reason, co.Divergence.Reason)
	assert.Equal(t, "Verdict FAIL. task 1 rejected", *over.Entries[15].Summary)
	assert.Equal(t, "Task 1 PASS: no blocking findings", *orig.Entries[15].Summary, "an overlay never changes its base")
}
