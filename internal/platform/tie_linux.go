//go:build linux

package platform

import (
	"os/exec"
	"syscall"
)

// ParentDeathSignal reports whether TieToParent has the kernel signal the child
// when its parent dies (Linux's PR_SET_PDEATHSIG); elsewhere the child has to
// watch its parent itself.
const ParentDeathSignal = true

// TieToParent makes cmd, when started, lead a process group of its own (so
// KillProcessGroup reaches the children it leaves behind) and receive SIGTERM
// when the process that started it dies, however it dies (SIGKILL included):
// the child's SIGTERM handler then kills its group. The signal follows the
// thread that started cmd: the caller keeps that thread (runtime.LockOSThread)
// until cmd has ended.
func TieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
