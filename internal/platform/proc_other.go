//go:build !unix && !windows

package platform

import (
	"errors"
	"os"
)

// ProcessAlive cannot tell here: every process counts as running, so nothing of
// one is ever taken over.
func ProcessAlive(int) bool { return true }

// KillProcessGroup kills the process pid itself.
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

// GroupAlive cannot tell here: a group counts as running, so a record of one is
// never taken as gone.
func GroupAlive(pgid int) bool { return pgid > 0 }
