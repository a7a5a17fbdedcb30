package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// previewProject takes a checkpoint, then commits on the branch and leaves
// uncommitted and untracked work, so a restore has every kind of change to show.
func previewProject(t *testing.T) (*testProject, *Store, *Checkpoint) {
	t.Helper()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("src/app.go", "package app // task 1\n")
	p.commit("task 1: the app", base.Add(2*time.Hour))
	p.write("src/more.go", "package app // task 2\n")
	p.commit("task 2: more", base.Add(3*time.Hour))
	p.write("README.md", "# edited, not committed\n")
	p.write("mywork.txt", "my own notes\n")
	require.NoError(t, os.Remove(p.abs("src/deep/util.go")))
	return p, s, cp
}

func TestPreviewIsReadOnlyAndComplete(t *testing.T) {
	t.Parallel()
	p, s, cp := previewProject(t)
	before, err := fixture.Digest(p.root)
	require.NoError(t, err)

	pv, err := s.Preview(*cp)
	require.NoError(t, err)
	after, err := fixture.Digest(p.root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the preview writes nothing, in the project or the shadow repository")

	assert.Equal(t, p.dir, pv.ProjectDir)
	assert.Equal(t, 2, pv.OverwriteCount, "README.md and src/app.go")
	assert.Equal(t, []PreviewPath{{Path: "README.md", Uncommitted: true}, {Path: "src/app.go"}}, pv.Overwrite, "work at risk first")
	assert.Equal(t, 2, pv.RemoveCount)
	assert.Equal(t, []PreviewPath{{Path: "mywork.txt", Untracked: true}, {Path: "src/more.go"}}, pv.Remove)
	assert.Equal(t, []PreviewPath{{Path: "src/deep/util.go"}}, pv.Create)
	assert.Equal(t, 2, pv.AtRisk)
	assert.Equal(t, "feat/login", pv.Branch)
	require.Equal(t, 2, pv.MovedPastCount)
	assert.Equal(t, "task 2: more", pv.MovedPast[0].Subject)
	assert.Equal(t, "task 1: the app", pv.MovedPast[1].Subject)
	assert.False(t, pv.AlreadyThere)

	var out bytes.Buffer
	require.NoError(t, pv.Write(&out))
	text := out.String()
	for _, want := range []string{
		"Restore preview for " + p.dir, "overwrite: 2 files", "README.md  [uncommitted changes]",
		"remove: 2 files", "mywork.txt  [untracked]", "create: 1 file", "past 2 commits",
		"task 2: more", "pre-restore-safety checkpoint", "the command that undoes the restore names it by its hash and is printed once it is taken",
	} {
		assert.Contains(t, text, want)
	}
	// No undo command before the checkpoint it restores exists: one named by its
	// reason would restore an older safety checkpoint after a kill before it is taken.
	assert.NotContains(t, text, "replay checkpoint restore")
}

func TestPreviewListsTheFirstPathsAndCounts(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	for i := 0; i < 25; i++ {
		p.write(fmt.Sprintf("gen/f%02d.txt", i), "x\n")
	}
	p.write("zz-notes.txt", "mine\n") // untracked too, but listed by name order
	pv, err := s.Preview(*cp)
	require.NoError(t, err)
	assert.Equal(t, 26, pv.RemoveCount)
	assert.Len(t, pv.Remove, PreviewListed)
	var out bytes.Buffer
	require.NoError(t, pv.Write(&out))
	assert.Contains(t, out.String(), "… and 16 more")
}

func TestPreviewEscapesNames(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("evil\x1b[31mred.txt", "x\n")
	pv, err := s.Preview(*cp)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, pv.Write(&out))
	assert.NotContains(t, out.String(), "\x1b")
}

func TestRestoreWithYesPrintsThePreviewFirst(t *testing.T) {
	t.Parallel()
	_, s, cp := previewProject(t)
	var log bytes.Buffer
	rep, err := s.Restore(*cp, RestoreOptions{Session: "1", Yes: true, Now: clockAt(4 * time.Hour), Log: &log})
	require.NoError(t, err)
	require.NotNil(t, rep.Preview)
	text := log.String()
	i, j := strings.Index(text, "mywork.txt  [untracked]"), strings.Index(text, "Safety checkpoint")
	require.True(t, i >= 0 && j > i, "the preview comes before the safety checkpoint:\n%s", text)
}

func TestRestoreAskerSeesThePreview(t *testing.T) {
	t.Parallel()
	p, s, cp := previewProject(t)
	var asked ConfirmRequest
	before, err := fixture.Digest(p.root)
	require.NoError(t, err)
	_, err = s.Restore(*cp, RestoreOptions{Session: "1", Now: clockAt(4 * time.Hour), Confirm: func(r ConfirmRequest) (bool, error) {
		asked = r
		return false, nil
	}})
	require.Error(t, err)
	assert.Contains(t, asked.Description, "mywork.txt  [untracked]")
	assert.Contains(t, asked.Description, "task 1: the app")
	assert.Contains(t, asked.Title, p.dir)
	after, err := fixture.Digest(p.root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "declined: nothing written")
}

func TestRestoreIsIdempotent(t *testing.T) {
	t.Parallel()
	p, s, cp := previewProject(t)
	_, err := s.Restore(*cp, RestoreOptions{Session: "1", Yes: true, Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	count := func() int {
		cps, _, err := s.List()
		require.NoError(t, err)
		return len(cps)
	}
	n := count()

	var log bytes.Buffer
	never := func(ConfirmRequest) (bool, error) {
		t.Error("asked although there is nothing to restore")
		return false, nil
	}
	rep, err := s.Restore(*cp, RestoreOptions{Session: "2", Confirm: never, Now: clockAt(5 * time.Hour), Log: &log})
	require.NoError(t, err)
	assert.True(t, rep.AlreadyThere)
	assert.Nil(t, rep.Safety)
	assert.Equal(t, n, count(), "no new safety checkpoint")
	assert.Contains(t, log.String(), "Already at checkpoint "+cp.Short)

	p.write("README.md", "# changed again\n")
	rep, err = s.Restore(*cp, RestoreOptions{Session: "3", Yes: true, Now: clockAt(6 * time.Hour)})
	require.NoError(t, err)
	assert.False(t, rep.AlreadyThere)
	require.NotNil(t, rep.Safety)
	assert.Equal(t, n+1, count(), "a changed file is restored behind a new safety checkpoint")
}

// A restore killed after it wrote the tree but before it rewrote the index leaves
// a tree and HEAD that match the checkpoint and an index that does not: the next
// restore is not "already there", it puts the index back (behind a safety
// checkpoint that keeps the stale index).
func TestRestoreIsNotIdempotentWhileTheIndexDiffers(t *testing.T) {
	t.Parallel()
	_, s, cp := previewProject(t)
	_, err := s.Restore(*cp, RestoreOptions{Session: "1", Yes: true, Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	idx, err := s.projectIndex()
	require.NoError(t, err)
	idx.Entries = append(idx.Entries, &index.Entry{Name: "zz-staged-then-killed.txt", Hash: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"), Mode: filemode.Regular})
	require.NoError(t, s.writeProjectIndex(idx))
	same, err := s.indexIsHead(idx)
	require.NoError(t, err)
	require.False(t, same)

	rep, err := s.Restore(*cp, RestoreOptions{Session: "2", Yes: true, Now: clockAt(5 * time.Hour)})
	require.NoError(t, err)
	assert.False(t, rep.AlreadyThere, "the index still differs from the checkpoint's commit")
	require.NotNil(t, rep.Safety)
	idx, err = s.projectIndex()
	require.NoError(t, err)
	same, err = s.indexIsHead(idx)
	require.NoError(t, err)
	assert.True(t, same, "the restore put the index back")

	rep, err = s.Restore(*cp, RestoreOptions{Session: "3", Yes: true, Now: clockAt(6 * time.Hour)})
	require.NoError(t, err)
	assert.True(t, rep.AlreadyThere, "now it is there")
}
