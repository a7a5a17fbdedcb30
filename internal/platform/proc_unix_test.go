//go:build unix

package platform

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd, when started, lead a process group of its own (as
// TieToParent does, without the tie to the test's thread).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
