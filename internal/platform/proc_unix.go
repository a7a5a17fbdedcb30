//go:build unix

package platform

import (
	"errors"
	"os"
	"syscall"
)

// ProcessAlive reports whether a process with pid runs (or might: only "no such
// process" counts as gone).
func ProcessAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH) && !zombie(pid)
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
// might: only "no such process", or a group of zombies where the system says
// so, counts as gone). A zombie answers kill(0) but can change nothing: where
// nobody reaps the children of a dead replay (a container's init), its agent
// stays one.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !onlyZombies(pgid)
}
