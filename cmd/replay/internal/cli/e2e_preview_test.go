package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shadowCommits counts the commits of the shadow repository, every safety
// checkpoint included.
func shadowCommits(t *testing.T, shadow string) int {
	t.Helper()
	repo, err := git.PlainOpen(shadow)
	require.NoError(t, err)
	iter, err := repo.CommitObjects()
	require.NoError(t, err)
	n := 0
	require.NoError(t, iter.ForEach(func(*object.Commit) error { n++; return nil }))
	return n
}

// TestResumePreviewWithYes checks that `replay --yes` prints the preview before it
// acts: the untracked file flagged, the commits the branch moves past, the safety
// checkpoint and the undo command; and that --json carries it as an object.
func TestResumePreviewWithYes(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	require.NoError(t, os.WriteFile(filepath.Join(p.Project, "mywork.txt"), []byte("mine\n"), 0o644))
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	for _, want := range []string{
		"Restore preview for " + p.Project, "mywork.txt  [untracked]", "past 1 commit", "wip: task 3 partial",
		"first: a pre-restore-safety checkpoint", "printed once it is taken",
	} {
		assert.Contains(t, r.Stderr, want)
	}
	preview := r.Stderr[strings.Index(r.Stderr, "Restore preview"):strings.Index(r.Stderr, "Safety checkpoint")]
	assert.NotContains(t, preview, "replay checkpoint restore", "the preview names no undo: the safety checkpoint does not exist yet")
	assert.Regexp(t, `Safety checkpoint ([0-9a-f]{8}) [^\n]*\nTo undo this restore: replay checkpoint restore [0-9a-f]{8} --yes`, r.Stderr, "the undo names the safety checkpoint by hash, after it exists")
	assert.Less(t, strings.Index(r.Stderr, "Restore preview"), strings.Index(r.Stderr, "Safety checkpoint"), "the preview comes before the restore")

	var doc struct {
		Restore struct {
			Preview struct {
				ProjectDir string `json:"project_dir"`
				Remove     []struct {
					Path      string `json:"path"`
					Untracked bool   `json:"untracked"`
				} `json:"remove"`
				RemoveCount    int `json:"remove_count"`
				MovedPastCount int `json:"moved_past_count"`
			} `json:"preview"`
		} `json:"restore"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	pv := doc.Restore.Preview
	assert.Equal(t, p.Project, pv.ProjectDir)
	assert.Equal(t, 1, pv.MovedPastCount)
	require.NotEmpty(t, pv.Remove)
	assert.Equal(t, "mywork.txt", pv.Remove[0].Path, "work at risk is listed first")
	assert.True(t, pv.Remove[0].Untracked)
}

// TestResumeIsIdempotent: a second `replay --yes` on the restored tree restores
// nothing and takes no safety checkpoint; a changed file makes it restore again.
func TestResumeIsIdempotent(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	n := shadowCommits(t, p.Shadow)

	r = s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "Already at checkpoint")
	assert.Contains(t, r.Stdout, "Already at checkpoint")
	assert.Contains(t, r.Stdout, "===COMPRESSION_STATE===", "it goes on to the hand-off")
	assert.Contains(t, r.Stdout, "Health: GREEN", "a verified resume")
	assert.NotContains(t, r.Stderr, "Safety checkpoint")
	assert.Equal(t, n, shadowCommits(t, p.Shadow), "no new safety checkpoint")

	// Without --yes and without a terminal it does not need to ask either.
	r = s.Run(t, p.Project, p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, n, shadowCommits(t, p.Shadow))

	require.NoError(t, os.WriteFile(filepath.Join(p.Project, "NOTES.md"), []byte("changed\n"), 0o644))
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "Already at checkpoint")
	assert.Greater(t, shadowCommits(t, p.Shadow), n, "a changed file is restored behind a new safety checkpoint")
	assert.Contains(t, r.Stderr, "Safety checkpoint")
}

// TestCheckpointRestorePreviewAndIdempotence drives `replay checkpoint restore`:
// the refusal without a terminal names its cause and shows the preview, --yes
// restores, and a second --yes finds nothing to do.
func TestCheckpointRestorePreviewAndIdempotence(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	require.NoError(t, os.WriteFile(filepath.Join(p.Project, "mywork.txt"), []byte("mine\n"), 0o644))
	before := digest(t, p.Root)
	r := s.Run(t, p.Project, "checkpoint", "restore", "pre-wave-2", "--now", now(p))
	assert.Equal(t, 3, r.Code)
	assert.Contains(t, r.Stderr, "cannot ask for a confirmation (stdin is not a terminal): pass --yes to restore checkpoint")
	assert.Contains(t, r.Stderr, "mywork.txt  [untracked]")
	assert.Equal(t, before, digest(t, p.Root))

	r = s.Run(t, p.Project, "checkpoint", "restore", "pre-wave-2", "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	n := shadowCommits(t, p.Shadow)
	r = s.Run(t, p.Project, "checkpoint", "restore", "pre-wave-2", "--yes", "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		AlreadyThere bool `json:"already_there"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	assert.True(t, doc.AlreadyThere)
	assert.Equal(t, n, shadowCommits(t, p.Shadow))
}

// TestNoTerminalRefusalNamesTheCause: when verification fails back to the start
// because --repo is not a git repository, the refusal without a terminal says so,
// and says why it cannot ask; nothing changes. With the real repository the same
// run resumes (the other side of the guard).
func TestNoTerminalRefusalNamesTheCause(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	notGit := filepath.Join(p.Root, "notgit")
	require.NoError(t, os.MkdirAll(notGit, 0o755))
	before := digest(t, p.Root)
	r := s.Run(t, p.Project, p.Scratch, "--repo", notGit, "--shadow", filepath.Join(p.Root, "noshadow"), "--now", now(p))
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "replay: "+notGit+" is not a git repository, so no commit could be verified")
	assert.Contains(t, r.Stderr, "There is no terminal to ask on (stdin is not a terminal)")
	assert.NotContains(t, r.Stderr, "Run in a terminal")
	assert.Equal(t, before, digest(t, p.Root))

	r = s.Run(t, p.Project, p.Scratch, "--repo", p.Project, "--yes", "--now", now(p))
	assert.Equal(t, 0, r.Code, r.Stderr)
}
