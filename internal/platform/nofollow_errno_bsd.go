//go:build freebsd || dragonfly

package platform

import "syscall"

// noFollowErrno is what open(2) with O_NOFOLLOW returns on a symbolic link
// here, besides ELOOP.
const noFollowErrno = syscall.EMLINK
