//go:build unix

package share

import "syscall"

// noFollow makes an open of a run's file fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
