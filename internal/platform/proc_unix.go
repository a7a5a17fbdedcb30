//go:build unix

package platform

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ProcessAlive reports whether a process with pid runs (or might: only "no such
// process" counts as gone).
func ProcessAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}

// SetProcessGroup makes cmd, when started, lead a process group of its own, so
// KillProcessGroup reaches the children it leaves behind.
func SetProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// KillProcessGroup kills the process group led by pid (SIGKILL); a group already
// gone is no error.
func KillProcessGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// GroupAlive reports whether any process of the process group pgid runs (or
// might: only "no such process" counts as gone).
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
