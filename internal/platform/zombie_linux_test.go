//go:build linux

package platform

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process group whose only member has exited but is not reaped (a zombie, as
// the agent of a dead replay stays where nobody reaps it) is not alive, and a
// running group is (both sides of the check a resume makes before it restores).
func TestGroupAliveIgnoresZombies(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	setProcessGroup(cmd)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	assert.True(t, GroupAlive(pid), "a running group")
	assert.True(t, ProcessAlive(pid), "a running process")

	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	deadline := time.Now().Add(5 * time.Second)
	for !zombie(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.True(t, zombie(pid), "the killed child, not reaped, is a zombie")
	require.NoError(t, syscall.Kill(-pid, 0), "kill(0) still answers for a zombie group")
	assert.False(t, GroupAlive(pid), "a group of zombies")
	assert.False(t, ProcessAlive(pid), "a zombie")
}
