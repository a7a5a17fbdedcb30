package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var undoLine = regexp.MustCompile(`Undo: replay (checkpoint restore [0-9a-f]{8} --yes --repo \S+ --shadow \S+)`)

// TestStagedWorkSurvivesResumeAndUndo is the reproduction of the lost staged work:
// stage one version, edit another, resume (which restores), run the printed undo,
// and find both versions where they were after git gc --prune=now.
func TestStagedWorkSurvivesResumeAndUndo(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	writeFile(t, p.Project, "f.txt", "A\n", 0o644)
	s.GitOut(t, p.Project, "add", "f.txt")
	writeFile(t, p.Project, "f.txt", "B\n", 0o644)
	staged := s.GitOut(t, p.Project, "rev-parse", ":f.txt")
	head := s.GitOut(t, p.Project, "rev-parse", "HEAD")
	status := s.GitOut(t, p.Project, "status", "--porcelain")

	r := s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "the index (staged changes) as refs/replay/index/")
	m := undoLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	assert.NoFileExists(t, filepath.Join(p.Project, "f.txt"), "the restore removed the untracked file")
	s.GitOut(t, p.Project, "reflog", "expire", "--expire=now", "--all")
	s.GitOut(t, p.Project, "gc", "--prune=now", "--quiet")
	s.GitOut(t, p.Project, "cat-file", "-e", staged) // kept by refs/replay/index/<session>

	u := s.Run(t, p.Project, append(strings.Fields(m[1]), "--now", now(p))...)
	require.Equal(t, 0, u.Code, u.Stderr)
	s.GitOut(t, p.Project, "gc", "--prune=now", "--quiet")
	assert.Equal(t, "B\n", readFile(t, filepath.Join(p.Project, "f.txt")))
	assert.Equal(t, staged, s.GitOut(t, p.Project, "rev-parse", ":f.txt"))
	assert.Equal(t, "A", s.GitOut(t, p.Project, "show", ":f.txt"))
	assert.Equal(t, head, s.GitOut(t, p.Project, "rev-parse", "HEAD"))
	assert.Equal(t, p.Branch, s.GitOut(t, p.Project, "branch", "--show-current"))
	assert.Equal(t, status, s.GitOut(t, p.Project, "status", "--porcelain"))
	s.GitOut(t, p.Project, "fsck", "--no-dangling")
}
