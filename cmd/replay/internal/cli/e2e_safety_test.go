package cli_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitOut runs the git binary (the reference) in dir with the sandbox environment and
// returns its trimmed stdout.
func (s *Sandbox) gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := s.Git(args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

var undoLine = regexp.MustCompile(`Undo: replay (checkpoint restore [0-9a-f]{8} --yes --repo \S+ --shadow \S+)`)

// TestStagedWorkSurvivesResumeAndUndo is the reproduction of the lost staged work:
// stage one version, edit another, resume (which restores), run the printed undo,
// and find both versions where they were after git gc --prune=now.
func TestStagedWorkSurvivesResumeAndUndo(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	writeFile(t, p.Project, "f.txt", "A\n", 0o644)
	s.gitOut(t, p.Project, "add", "f.txt")
	writeFile(t, p.Project, "f.txt", "B\n", 0o644)
	staged := s.gitOut(t, p.Project, "rev-parse", ":f.txt")
	head := s.gitOut(t, p.Project, "rev-parse", "HEAD")
	status := s.gitOut(t, p.Project, "status", "--porcelain")

	r := s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "the index (staged changes) as refs/replay/index/")
	m := undoLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	assert.NoFileExists(t, filepath.Join(p.Project, "f.txt"), "the restore removed the untracked file")
	s.gitOut(t, p.Project, "reflog", "expire", "--expire=now", "--all")
	s.gitOut(t, p.Project, "gc", "--prune=now", "--quiet")
	s.gitOut(t, p.Project, "cat-file", "-e", staged) // kept by refs/replay/index/<session>

	u := s.Run(t, p.Project, append(strings.Fields(m[1]), "--now", now(p))...)
	require.Equal(t, 0, u.Code, u.Stderr)
	s.gitOut(t, p.Project, "gc", "--prune=now", "--quiet")
	assert.Equal(t, "B\n", readFile(t, filepath.Join(p.Project, "f.txt")))
	assert.Equal(t, staged, s.gitOut(t, p.Project, "rev-parse", ":f.txt"))
	assert.Equal(t, "A", s.gitOut(t, p.Project, "show", ":f.txt"))
	assert.Equal(t, head, s.gitOut(t, p.Project, "rev-parse", "HEAD"))
	assert.Equal(t, p.Branch, s.gitOut(t, p.Project, "branch", "--show-current"))
	assert.Equal(t, status, s.gitOut(t, p.Project, "status", "--porcelain"))
	s.gitOut(t, p.Project, "fsck", "--no-dangling")
}
