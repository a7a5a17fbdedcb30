package checkpoint

import (
	"os"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A foreign checkpoint taken right after a commit; the branch was reset (the
// commit lost) and the same work committed again later, by a replay after a
// restore. The checkpoint holds every change that later commit made since the
// commit the time rule finds, so its restore keeps the branch on it: moving
// the branch back by time alone dropped that verified commit from the branch
// and left its file uncommitted (end-state simulator seed 79). A commit after
// it with a change the checkpoint does not hold is still moved past.
func TestRestoreKeepsALaterCommitTheCheckpointHolds(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	first := p.head()
	p.write("plan.md", "the plan\n")
	p.commit("docs: write the plan", base.Add(10*time.Minute))
	p.foreign(s, "pre-plan-gate | 2026-04-07 14:20:00 | build", base.Add(20*time.Minute))
	cps, _, err := s.List()
	require.NoError(t, err)
	wt, err := p.repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.Reset(&git.ResetOptions{Commit: first, Mode: git.HardReset}))
	p.write("plan.md", "the plan\n")
	again := p.commit("docs: write the plan", base.Add(3*time.Hour))
	p.write("src/review.go", "package app // review\n")
	p.commit("feat: review fixes", base.Add(4*time.Hour))

	head, err := s.ProjectHeadAt(cps[0])
	require.NoError(t, err)
	assert.Equal(t, again, head, "the branch target is the newest commit whose changes the checkpoint holds")
	_, err = s.Restore(cps[0], RestoreOptions{Confirm: yes, Now: clockAt(5 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, again, p.head())
	_, err = os.Stat(p.abs("src/review.go"))
	assert.True(t, os.IsNotExist(err), "a change the checkpoint does not hold is undone")
	st, err := wt.Status()
	require.NoError(t, err)
	assert.True(t, st.IsClean(), "the restored tree is the branch's: %v", st)
}
