//go:build !unix

package platform

import "os/exec"

// setProcessGroup does nothing here: there are no process groups.
func setProcessGroup(*exec.Cmd) {}
