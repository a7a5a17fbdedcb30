package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// otherSessionCommit adds a second live session to the reference fixture's
// scratch dir (a /debugging run whose fixer is in flight) and its fixer's
// commit of file, made after this run's partial task-3 commit: another run's
// work after the checkpoint the resume restores.
func otherSessionCommit(t *testing.T, p *fixture.Pipeline, file string) string {
	t.Helper()
	other := "1775437000"
	start := fixture.Start.Add(8100 * time.Second)
	dir := filepath.Join(p.Tmp, "crucible-dispatch-"+other)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	h := manifest.DispatchHeader{Template: "fixer", Pipeline: "debugging", Phase: "3", Timestamp: start, DispatchDir: dir + "/"}
	body := "Fix the audit log entry written for failed logins: the entry drops the user id. Commit your work.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-fixer.md"), manifest.FormatDispatchFile(h, []byte(body)), 0o644))
	line := `{"seq":1,"file":"1-fixer.md","role":"fixer","phase":"3","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":60,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(line), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, manifest.DispatchActivePrefix+other), []byte("dispatch-dir: "+dir+"/\nseq: 1\n"), 0o644))
	return commitAt(t, p.Project, file, "fix: audit log entry for failed logins keeps the user id", start.Add(5*time.Minute))
}

// Symptom 5, found by the crash simulator's two-live-sessions shape (101 of
// seeds 1-1500): another session committed after the checkpoint, between and
// after this run's commits. The restore used to refuse ("finish or resume that
// session first"), also once that session had finished, so neither run could
// ever be resumed. Its files being apart from this run's work since the
// checkpoint, the restore goes back to the checkpoint and applies the other
// session's commit again on top (same message, author and times): this run's
// partial commit is undone, the other's work stays, and the old tip stays
// reachable from the pre-restore ref.
func TestRestoreKeepsOtherSessionsCommit(t *testing.T) {
	t.Parallel()
	p := build(t)
	fix := otherSessionCommit(t, p, "fixes/audit-entry.go")
	pl, a := decideFixture(t, p)
	require.Len(t, a.OthersWork, 1)
	require.Equal(t, fix, a.OthersWork[0].Commit.Hash)
	require.Len(t, a.Partial, 1, "this run's in-flight task 3 left its wip commit")
	partial := a.Partial[0].Commit.Hash
	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	oldHead, err := repo.Head()
	require.NoError(t, err)

	var log strings.Builder
	res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Session: "1775442000", Log: &log})
	require.NoError(t, err, log.String())
	require.NotNil(t, res.Restore)

	head, err := repo.Head()
	require.NoError(t, err)
	tip, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)
	orig, err := repo.CommitObject(plumbing.NewHash(fix))
	require.NoError(t, err)
	assert.NotEqual(t, fix, tip.Hash.String(), "the other session's commit is applied again on the restored base")
	assert.Equal(t, orig.Message, tip.Message)
	assert.Equal(t, orig.Author, tip.Author)
	assert.Equal(t, orig.Committer, tip.Committer)
	cp, err := pl.Store.Find(a.Checkpoint.Hash)
	require.NoError(t, err)
	base, err := pl.Store.ProjectHeadAt(*cp)
	require.NoError(t, err)
	require.Len(t, tip.ParentHashes, 1)
	assert.Equal(t, base, tip.ParentHashes[0], "the kept commit sits on the checkpoint's commit: this run's partial commit is off the branch")
	assert.Equal(t, res.Restore.ProjectHead, tip.Hash)

	body, err := os.ReadFile(filepath.Join(p.Project, "fixes", "audit-entry.go"))
	require.NoError(t, err)
	assert.Equal(t, "fix: audit log entry for failed logins keeps the user id\n", string(body), "the other session's file is in the tree")
	_, err = os.Stat(filepath.Join(p.Project, "internal", "audit", "log.go"))
	assert.True(t, os.IsNotExist(err), "this run's partial task-3 file is undone")

	ref, err := repo.Reference(plumbing.ReferenceName(checkpoint.PreRestoreRefPrefix+"1775442000"), true)
	require.NoError(t, err)
	assert.Equal(t, oldHead.Hash(), ref.Hash(), "the pre-restore ref keeps the old tip (the partial commit %s and the original %s)", partial[:8], fix[:8])
	assert.Contains(t, log.String(), "To undo this restore: replay checkpoint restore "+res.Restore.Safety.Short)
	assert.Contains(t, log.String(), fmt.Sprintf("Kept another run's commit %s", short(fix)))
	// The preview names the kept commit apart, with its copy, not among the
	// commits the branch leaves behind (the partial commit is among those).
	pv := res.Restore.Preview
	require.NotNil(t, pv)
	require.Equal(t, 1, pv.KeptCount)
	assert.Equal(t, checkpoint.PreviewCommit{Short: fix[:8], Subject: orig.Message[:strings.IndexByte(orig.Message+"\n", '\n')], Again: tip.Hash.String()[:8]}, pv.Kept[0])
	for _, c := range pv.MovedPast {
		assert.NotEqual(t, fix[:8], c.Short, "the kept commit is not listed as left behind")
	}
	assert.Contains(t, pv.MovedPast, checkpoint.PreviewCommit{Short: partial[:8], Subject: a.Partial[0].Commit.Subject()})
	assert.Contains(t, log.String(), "and keeps 1 commit of another run, applied again on top of the checkpoint:\n      "+fix[:8])
	announced := strings.Index(log.String(), "The restore keeps 1 commit of another run")
	assert.True(t, announced >= 0 && announced < strings.Index(log.String(), "Restore preview"), "the kept commit is announced before the preview:\n%s", log.String())

	// The tree holds the kept file, nothing else changed against the restored branch.
	wt, err := repo.Worktree()
	require.NoError(t, err)
	st, err := wt.Status()
	require.NoError(t, err)
	for path, s := range st {
		assert.False(t, s.Staging != git.Unmodified && s.Staging != git.Untracked, "%s is staged (%c) after the restore", path, s.Staging)
		assert.False(t, s.Worktree == git.Modified || s.Worktree == git.Deleted, "%s differs from the branch (%c) after the restore", path, s.Worktree)
	}
}

// The other side: the other session's commit changed the file this run's
// partial commit changed, so the two cannot be kept apart. The restore
// refuses, changes nothing, and says how to go on (restore the checkpoint by
// hand: the pre-restore ref keeps the other run's commit), not "finish that
// session first", which never helps.
func TestRestoreRefusesOtherSessionsCommitOnTheSameFile(t *testing.T) {
	t.Parallel()
	p := build(t)
	fix := otherSessionCommit(t, p, "internal/audit/log.go")
	_, a := decideFixture(t, p)
	require.Len(t, a.OthersWork, 1)
	require.Equal(t, fix, a.OthersWork[0].Commit.Hash)
	before := digest(t, p.Project)
	_, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Session: "1775442000"})
	require.Error(t, err)
	assert.ErrorIs(t, err, checkpoint.ErrRefused)
	assert.Contains(t, err.Error(), "internal/audit/log.go")
	assert.Contains(t, err.Error(), "replay checkpoint restore "+a.Checkpoint.Short)
	assert.NotContains(t, err.Error(), "finish or resume that session first")
	assert.Equal(t, before, digest(t, p.Project), "nothing was changed")
}
