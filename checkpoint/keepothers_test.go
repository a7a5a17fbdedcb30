package checkpoint

import (
	"os"
	"testing"
	"time"

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
