package checkpoint

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// gitIn runs the git binary (the reference implementation) in dir with a hermetic
// environment and returns its trimmed stdout.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(t, dir, args...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func gitCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	testtools.Git(t, "the git binary is needed as the reference")
	home := filepath.Join(filepath.Dir(dir), "git-home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	return cmd
}

// TestUndoBringsBackTheIndex stages one version of a file, edits another, restores
// an older checkpoint, runs git gc --prune=now, undoes, runs gc again, and finds the
// staged version in the index and the edited one on disk.
func TestUndoBringsBackTheIndex(t *testing.T) {
	t.Parallel()
	for _, dropRef := range []bool{false, true} {
		name := "with the project index ref"
		if dropRef {
			name = "index ref deleted: blobs come back from the shadow repository"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newTestProject(t)
			s := p.store()
			cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
			require.NoError(t, err)
			head := p.head()

			p.write("f.txt", "A staged\n")
			p.write("g.txt", "G staged then deleted\n")
			gitIn(t, p.dir, "add", "f.txt", "g.txt")
			p.write("f.txt", "B in the working tree\n")
			require.NoError(t, os.Remove(p.abs("g.txt")))
			blobA := gitIn(t, p.dir, "rev-parse", ":f.txt")
			blobG := gitIn(t, p.dir, "rev-parse", ":g.txt")
			statusBefore := gitIn(t, p.dir, "status", "--porcelain")
			require.Contains(t, statusBefore, "AM f.txt")
			require.Contains(t, statusBefore, "AD g.txt")

			rep, err := s.Restore(*cp, RestoreOptions{Session: "1775430161", Confirm: yes, Now: clockAt(2 * time.Hour)})
			require.NoError(t, err)
			assert.NoFileExists(t, p.abs("f.txt"))
			assert.Equal(t, "refs/replay/index/1775430161", rep.IndexRef)
			assert.Empty(t, gitIn(t, p.dir, "ls-files", "f.txt", "g.txt"), "the restore resets the index")

			if dropRef {
				gitIn(t, p.dir, "update-ref", "-d", rep.IndexRef)
			} else {
				assert.Equal(t, "blob", gitIn(t, p.dir, "cat-file", "-t", rep.IndexRef+":f.txt"))
				assert.Equal(t, head.String(), gitIn(t, p.dir, "rev-parse", rep.IndexRef+"^"), "the index commit sits on HEAD")
			}
			gitIn(t, p.dir, "reflog", "expire", "--expire=now", "--all")
			gitIn(t, p.dir, "gc", "--prune=now", "--quiet")
			if dropRef {
				require.Error(t, gitCmd(t, p.dir, "cat-file", "-e", blobA).Run(), "the staged blob is gone from the project")
			} else {
				gitIn(t, p.dir, "cat-file", "-e", blobA)
			}

			safety, err := s.Find(rep.Safety.Hash.String())
			require.NoError(t, err)
			undo, err := s.Restore(*safety, RestoreOptions{Session: "1775430162", Confirm: yes, Now: clockAt(3 * time.Hour)})
			require.NoError(t, err)
			assert.Equal(t, head, undo.ProjectHead)
			gitIn(t, p.dir, "gc", "--prune=now", "--quiet")

			got, err := os.ReadFile(p.abs("f.txt"))
			require.NoError(t, err)
			assert.Equal(t, "B in the working tree\n", string(got))
			assert.Equal(t, blobA, gitIn(t, p.dir, "rev-parse", ":f.txt"))
			assert.Equal(t, "A staged", gitIn(t, p.dir, "show", ":f.txt"))
			assert.Equal(t, blobG, gitIn(t, p.dir, "rev-parse", ":g.txt"))
			assert.Equal(t, statusBefore, gitIn(t, p.dir, "status", "--porcelain"))
			assert.Equal(t, "feat/login", gitIn(t, p.dir, "branch", "--show-current"))
			gitcheck.Repo(t, p.dir)
			gitcheck.Index(t, p.dir, filepath.Join(p.dir, ".git", "index"))
			gitcheck.Repo(t, s.ShadowDir())
		})
	}
}

func TestSafetyCheckpointRecordsIndexAndBranch(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("wip.txt", "work in progress\n") // something to restore
	rep, err := s.Restore(*cp, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)

	rec, err := s.safetyRecordOf(*rep.Safety)
	require.NoError(t, err)
	assert.Equal(t, "refs/heads/feat/login", rec.branch)
	require.False(t, rec.index.IsZero())
	c, err := s.repo.CommitObject(rep.Safety.Hash)
	require.NoError(t, err)
	require.Len(t, c.ParentHashes, 2)
	assert.Equal(t, cp.Hash, c.ParentHashes[0], "the log still follows first parents")
	assert.Equal(t, rec.index, c.ParentHashes[1])
	cps, _, err := s.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1,pre-restore-safety", reasons(cps), "the index commit is not listed as a checkpoint")

	// An ordinary checkpoint records neither.
	plain, err := s.safetyRecordOf(*cp)
	require.NoError(t, err)
	assert.Equal(t, safetyRecord{}, plain)
}

func TestUndoRefusedOnAnotherBranch(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("wip.txt", "work in progress\n")
	rep, err := s.Restore(*cp, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	gitIn(t, p.dir, "switch", "-q", "-c", "elsewhere")
	before := p.state()

	_, err = s.Restore(*rep.Safety, RestoreOptions{Session: "2", Confirm: yes, Now: clockAt(3 * time.Hour)})
	var changed *BranchChangedError
	require.ErrorAs(t, err, &changed)
	assert.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), "on branch feat/login but it is on branch elsewhere now")
	assert.Equal(t, before, p.state(), "nothing was changed")

	gitIn(t, p.dir, "switch", "-q", "feat/login")
	_, err = s.Restore(*rep.Safety, RestoreOptions{Session: "2", Confirm: yes, Now: clockAt(3 * time.Hour)})
	require.NoError(t, err)
	assert.FileExists(t, p.abs("wip.txt"))
}

func TestRestoreRefusesAnUnmergedIndex(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	idx, err := p.repo.Storer.Index()
	require.NoError(t, err)
	h := idx.Entries[0].Hash
	idx.Entries = append(idx.Entries, &index.Entry{Name: "zz.txt", Hash: h, Mode: 0o100644, Stage: index.OurMode},
		&index.Entry{Name: "zz.txt", Hash: h, Mode: 0o100644, Stage: index.TheirMode})
	require.NoError(t, p.repo.Storer.SetIndex(idx))
	p.write("zz.txt", "<<<<<<< ours\n")
	before := p.state()
	tip, _, err := s.shadowTip()
	require.NoError(t, err)
	tipRef, err := s.repo.Reference(tip, true)
	require.NoError(t, err)

	_, err = s.Restore(*cp, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	var unmerged *UnmergedIndexError
	require.ErrorAs(t, err, &unmerged)
	assert.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), "zz.txt")
	assert.Equal(t, before, p.state())
	after, err := s.repo.Reference(tip, true)
	require.NoError(t, err)
	assert.Equal(t, tipRef.Hash(), after.Hash(), "no safety checkpoint was taken")
	_, err = p.repo.Reference(plumbing.ReferenceName("refs/replay/index/1"), false)
	assert.Error(t, err)
}

// TestSnapshotNeverBlocksOnAFIFO: a file replaced by a FIFO between the walk and the
// read is reported, never waited on.
func TestSnapshotNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	require.NoError(t, testtools.Mkfifo(p.abs("pipe"), 0o644))
	done := make(chan error, 1)
	go func() { done <- s.hashFile(&fileState{rel: "pipe", mode: 0o100644}) }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no longer a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}
