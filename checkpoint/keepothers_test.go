package checkpoint

import (
	"os"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkpoint taken while another session's attempt was in flight holds that
// attempt's uncommitted partial file; the other session has since moved on (its
// own resume removed the file). With leaveUncommitted the restore leaves such
// a path as it is now and undoes only this run's commit; without it (the
// other side) the checkpoint's copy comes back. Crash simulator seeds 1055,
// 1104 (and 23, 30, 130 once the restore keeps the other session's commits).
func TestRestoreKeepingLeavesUncommittedWorkAsItIsNow(t *testing.T) {
	t.Parallel()
	for _, leave := range []bool{true, false} {
		p := newTestProject(t)
		s := p.store()
		p.write("fixes/g04-fix2.partial", "partial attempt of the other session\n")
		cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-2", Source: "build", Now: clockAt(time.Hour)})
		require.NoError(t, err)
		require.NoError(t, os.Remove(p.abs("fixes/g04-fix2.partial")))
		p.write("src/app.go", "package app // this run's work after the checkpoint\n")
		p.commit("feat: this run's task", base.Add(2*time.Hour))
		p.write("units/t1.partial", "this run's in-flight attempt\n")

		_, kept, err := s.RestoreKeeping(*cp, nil, leave, RestoreOptions{Yes: true, Session: "1", Now: clockAt(3 * time.Hour)})
		require.NoError(t, err)
		assert.Empty(t, kept)
		st := p.state()
		assert.Equal(t, "-rw-r--r--:package app\n", st["src/app.go"], "this run's commit is undone")
		assert.NotContains(t, st, "units/t1.partial", "this run's partial file is undone")
		if leave {
			assert.NotContains(t, st, "fixes/g04-fix2.partial", "the other session's partial file stays as it is now")
		} else {
			assert.Contains(t, st, "fixes/g04-fix2.partial", "a plain restore writes the checkpoint's copy back")
		}
	}
}

// Crash simulator seed 11142 (two live sessions): a first resume restored
// pre-wave-1 keeping the other session's fix, made after pre-wave-2 was taken,
// so on the branch the fix now lies below this run's task 1 commit made again.
// A later resume restores pre-wave-2 (taken in the first course, recording no
// project commit): the newest project commit it holds is task 1's, but its
// changes since the checkpoint's time include the fix, which the checkpoint
// lacks. Counting the fix, the restore moved the branch back below task 1 and
// applied the fix again there: task 1's commit was lost with its file left
// uncommitted. The kept commits' paths do not count against the commits the
// checkpoint holds, and a kept commit the branch keeps is not applied twice.
func TestRestoreKeepingCountsNotTheKeptCommitsAgainstTheHeldOnes(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	p.write("plan.md", "plan\n")
	p.commit("docs: plan", base.Add(10*time.Minute))
	p.foreign(s, "pre-wave-1 | 2026-04-07T14:20:00Z | build", base.Add(20*time.Minute))
	p.write("units/t1.txt", "t1 done\n")
	p.foreign(s, "pre-wave-2 | 2026-04-07T14:40:00Z | build", base.Add(40*time.Minute))
	require.NoError(t, os.Remove(p.abs("units/t1.txt")))
	p.write("fixes/fix1.txt", "the other session's fix\n")
	fix := p.commit("docs(implementer): fix cycle 1", base.Add(50*time.Minute))
	p.write("units/t1.txt", "t1 done\n")
	t1 := p.commit("feat: task 1", base.Add(3*time.Hour))
	p.write("units/t2.txt", "t2 done\n")
	p.commit("feat: task 2", base.Add(3*time.Hour))

	cps, _, err := s.List()
	require.NoError(t, err)
	var cp *Checkpoint
	for i := range cps {
		if cps[i].Reason == "pre-wave-2" {
			cp = &cps[i]
		}
	}
	require.NotNil(t, cp)
	_, _, err = s.RestoreKeeping(*cp, []plumbing.Hash{fix}, true, RestoreOptions{Yes: true, Session: "1", Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, t1, p.head(), "the branch keeps task 1's commit, which the checkpoint holds, and the fix below it")
	st := p.state()
	assert.Contains(t, st, "fixes/fix1.txt")
	assert.Contains(t, st, "units/t1.txt")
	assert.NotContains(t, st, "units/t2.txt", "task 2, after the checkpoint, is undone")
}
