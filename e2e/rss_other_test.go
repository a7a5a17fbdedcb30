//go:build !unix

package e2e

import "os"

// peakRSS gives nothing here: no getrusage (the memory test skips).
func peakRSS(*os.ProcessState) (int64, bool) { return 0, false }
