//go:build unix

package inproc

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) this process and, with children,
// its waited-for child processes have used so far; 0 where the system does not
// say.
func CPUTime(children bool) time.Duration {
	who := syscall.RUSAGE_SELF
	if children {
		who = syscall.RUSAGE_CHILDREN
	}
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
