package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// fixedNow is the pinned clock of every test.
var fixedNow = time.Date(2026, 4, 7, 15, 0, 0, 0, time.UTC)

func clock() time.Time { return fixedNow }

func intp(n int) *int { return &n }

// newRequest writes a dispatch file for body under a fresh dispatch dir and returns
// its request; the working tree is a fresh temp dir (a git repo when withRepo).
func newRequest(t *testing.T, seq int, role, template string, task *int, body string, withRepo bool) Request {
	t.Helper()
	dir := t.TempDir()
	work := t.TempDir()
	if withRepo {
		initRepo(t, work)
	}
	return requestIn(t, dir, work, seq, role, template, task, body)
}

// requestIn writes a dispatch file in dir for a request working in work.
func requestIn(t *testing.T, dir, work string, seq int, role, template string, task *int, body string) Request {
	t.Helper()
	req := Request{
		Seq: seq, Role: role, Phase: "3", Task: task, Template: template,
		DispatchDir: dir, Session: "1775430161", WorkDir: work, Body: []byte(body), Now: clock,
	}
	req.DispatchFile = filepath.Join(dir, req.ID()+".md")
	taskS := ""
	if task != nil {
		taskS = taskText(task, "")
	}
	data := manifest.FormatDispatchFile(manifest.DispatchHeader{
		Template: template, Pipeline: "build", Phase: "3", Task: taskS, Timestamp: fixedNow, DispatchDir: dir,
	}, []byte(body))
	require.NoError(t, os.WriteFile(req.DispatchFile, data, 0o644))
	return req
}

// initRepo makes dir a git repository with one commit at a pinned date on main.
func initRepo(t *testing.T, dir string) *git.Repository {
	t.Helper()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o644))
	wt, err := repo.Worktree()
	require.NoError(t, err)
	_, err = wt.Add("README.md")
	require.NoError(t, err)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 4, 7, 14, 0, 0, 0, time.UTC)}
	_, err = wt.Commit("initial", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return repo
}

// headCommit returns the commit HEAD points to.
func headCommit(t *testing.T, dir string) *object.Commit {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	c, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)
	return c
}
