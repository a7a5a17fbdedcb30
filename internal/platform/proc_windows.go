//go:build windows

package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// stillActive is the exit code GetExitCodeProcess reports for a running process.
const stillActive = 259

// ProcessAlive reports whether a process with pid runs (or might: only a process
// that cannot be found or has exited counts as gone).
func ProcessAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return false // no such process
	}
	if err != nil {
		return true // it exists, we may not look at it
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// KillProcessGroup kills the process pid itself; on Windows the children it
// started are not reached (docs/platforms.md). A process already gone is no error.
func KillProcessGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// GroupAlive reports whether the process pgid runs: Windows has no process
// groups to look at, only the process itself.
func GroupAlive(pgid int) bool { return pgid > 0 && ProcessAlive(pgid) }
