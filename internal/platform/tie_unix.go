//go:build unix && !linux

package platform

import (
	"os/exec"
	"syscall"
)

// ParentDeathSignal is false here: the kernel has no parent-death signal that
// exec.Cmd can set, so the child watches its parent itself.
const ParentDeathSignal = false

// TieToParent makes cmd, when started, lead a process group of its own, so
// KillProcessGroup reaches the children it leaves behind; the tie to the
// parent's life is the child's own watch (see ParentDeathSignal).
func TieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
