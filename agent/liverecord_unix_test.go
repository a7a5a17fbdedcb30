//go:build unix

package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/platform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// groupLeader starts `sleep secs` leading its own process group; the test
// kills the group at its end.
func groupLeader(t *testing.T, secs string) *exec.Cmd {
	cmd := exec.Command("sleep", secs)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait() }() // reaped as soon as it ends, as init would
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd
}

func plantRecord(t *testing.T, dir string, r AgentRecord) {
	data, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, AgentLogsDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, AgentLogsDir, "21-build-implementer.pid"), data, 0o644))
}

// A resume started right after replay was killed finds the agent it tied to
// its life still ending: it waits for it (once told), then goes on; an agent
// that outlives the grace, or one not tied, is returned (refused) all the same.
func TestWaitLiveAgentsWaitsOnlyForTiedAgents(t *testing.T) {
	t.Parallel()
	dead := deadPID(t)
	for _, tc := range []struct {
		name   string
		tied   bool
		sleep  string
		grace  time.Duration
		live   bool
		waited bool
	}{
		{"a tied agent that ends within the grace", true, "0.4", 10 * time.Second, false, true},
		{"a tied agent that outlives the grace", true, "30", 300 * time.Millisecond, true, true},
		{"an agent not tied is refused at once", false, "30", 10 * time.Second, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ag := groupLeader(t, tc.sleep)
			plantRecord(t, dir, AgentRecord{ReplayPID: dead, AgentGroup: ag.Process.Pid, Seq: 21, Tied: tc.tied})
			told := 0
			start := time.Now()
			live := WaitLiveAgents(dir, tc.grace, func(rs []AgentRecord) {
				told++
				assert.Len(t, rs, 1)
			})
			assert.Equal(t, tc.live, len(live) == 1, "agents still running after the wait: %v", live)
			assert.Equal(t, map[bool]int{true: 1, false: 0}[tc.waited], told, "the wait is told once, and only when it waits")
			if !tc.tied {
				assert.Less(t, time.Since(start), 5*time.Second, "nothing waits for an agent that is not tied")
			}
		})
	}
}

// writeAgentRecord says whether the agent was tied to replay's life.
func TestAgentRecordSaysTied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, AgentLogsDir), 0o755))
	path := writeAgentRecord(Request{Seq: 3, Template: "build-implementer", DispatchDir: dir}, 4242)
	require.NotEmpty(t, path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r AgentRecord
	require.NoError(t, json.Unmarshal(data, &r))
	assert.Equal(t, platformTied(), r.Tied)
}

func platformTied() bool { return platform.ParentDeathSignal }
