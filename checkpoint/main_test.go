package checkpoint

import (
	"os"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMain runs the package's tests (trees of thousands of files, kill and crash
// loops) with their temp dirs in memory where the machine allows it: see
// testtools.MemoryTempDir.
func TestMain(m *testing.M) {
	cleanup := testtools.MemoryTempDir()
	restore := testtools.CollectLess()
	code := m.Run()
	restore()
	cleanup()
	os.Exit(code)
}
