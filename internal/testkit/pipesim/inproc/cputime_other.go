//go:build !unix

package inproc

import "time"

// CPUTime is 0 here: this system's CPU time is not read.
func CPUTime(children bool) time.Duration { return 0 }
