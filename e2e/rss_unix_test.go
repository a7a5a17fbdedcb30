//go:build unix

package e2e

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the peak resident set size, in bytes, of the waited process ps
// (getrusage's ru_maxrss: bytes on macOS, KiB elsewhere).
func peakRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss), true
	}
	return int64(ru.Maxrss) << 10, true
}
