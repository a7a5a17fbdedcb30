package testtools

import (
	"os"
	"runtime/debug"
)

// testGCPercent is the heap growth CollectLess sets: the collector runs when the
// heap has grown to five times what the last collection kept, not twice.
const testGCPercent = 400

// CollectLess raises the test process's GC percent to 400 (unless GOGC is set,
// which says otherwise) and returns the function that puts it back. The packages
// whose tests run many in-process commands and simulated runs call it from
// TestMain: they allocate much short-lived memory (git objects, manifests,
// JSON) and keep little, so a larger heap goal spends a quarter less CPU on
// collecting it (cmd/replay/internal/cli: 31 s to 24 s of CPU on 2 cores) for a
// peak of about 350 MiB instead of 140. It changes nothing a test checks: no
// test of these packages measures its own heap, and the processes they start
// keep their own setting.
func CollectLess() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(testGCPercent)
	return func() { debug.SetGCPercent(old) }
}
