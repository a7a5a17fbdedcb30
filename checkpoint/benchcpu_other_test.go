//go:build !unix

package checkpoint

import "time"

// processCPU is zero where the platform does not report it.
func processCPU() time.Duration { return 0 }
