//go:build unix && !(freebsd || dragonfly || netbsd)

package platform

import "syscall"

// noFollowErrno is what open(2) with O_NOFOLLOW returns on a symbolic link
// here: ELOOP.
const noFollowErrno = syscall.ELOOP
