//go:build !unix

package platform

import "os/exec"

// ParentDeathSignal is false here: no parent-death signal.
const ParentDeathSignal = false

// TieToParent does nothing here: there are no process groups to lead, and the
// child's life cannot be tied to its parent's (docs/platforms.md).
func TieToParent(*exec.Cmd) {}
