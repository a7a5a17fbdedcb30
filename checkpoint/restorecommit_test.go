package checkpoint

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A resume with no checkpoint for its resume point restores the project's
// commit before the attempts that never completed: their commit undone, the
// branch back, the half-written file gone, ignored files untouched; and, as
// for a checkpoint, a pre-restore-safety checkpoint holds the tree as it was
// and refs/replay/pre-restore/<session> the HEAD it replaced, with the undo
// printed. The target names no ref of the shadow: the checkpoint list is as
// it was, plus the safety checkpoint.
func TestRestoreCommitUndoesAnAttemptsWork(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	_, _, err := s.Create(CreateOptions{Reason: "pre-design-gate", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	before := p.head()
	want := p.state()
	p.write("units/t1.txt", "t1 done\n")
	partial := p.commit("feat: task 1 half of it", base.Add(2*time.Hour))
	p.write("units/t1.partial", "attempt of t1\n")
	p.write("README.md", "# edited by the attempt\n")
	p.write("later.log", "ignored, kept\n")
	crashed := p.state()

	var log bytes.Buffer
	rep, err := s.RestoreCommit(before, "before seq 5", RestoreOptions{Session: "1775430161", Marker: &Marker{Branch: "feat/login"}, Yes: true, Now: clockAt(3 * time.Hour), Log: &log})
	require.NoError(t, err, log.String())
	assert.Equal(t, before, p.head(), "the branch is back at the commit before the attempt")
	got := p.state()
	assert.Equal(t, "ignored, kept\n", got["later.log"][len("-rw-r--r--:"):])
	delete(got, "later.log")
	assert.Equal(t, want, got, "the tree is the commit's (ignored files aside)")

	// nothing is lost: the ref keeps the partial commit, the safety checkpoint the tree
	ref, err := p.repo.Reference(plumbing.ReferenceName(PreRestoreRefPrefix+"1775430161"), false)
	require.NoError(t, err)
	assert.Equal(t, partial, ref.Hash())
	require.NotNil(t, rep.Safety)
	assert.Equal(t, SafetyReason, rep.Safety.Reason)
	assert.Contains(t, log.String(), rep.UndoCommand)
	assert.Equal(t, "before seq 5", rep.Checkpoint.Reason)
	cps, _, err := s.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-design-gate,pre-restore-safety", reasons(cps), "the target is no checkpoint of the list")

	// the undo brings the crashed tree and the branch back
	safety := *rep.Safety
	_, err = s.Restore(safety, RestoreOptions{Session: "1775430162", Yes: true, Now: clockAt(4 * time.Hour), Log: &log})
	require.NoError(t, err, log.String())
	assert.Equal(t, partial, p.head())
	assert.Equal(t, crashed, p.state())
	_, err = os.Stat(p.abs("units/t1.partial"))
	require.NoError(t, err)
}
