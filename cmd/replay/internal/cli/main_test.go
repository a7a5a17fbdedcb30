package cli

import (
	"os"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMain runs the package's tests (in-process commands over thousands of
// simulated runs, repositories and sandboxes) with their temp dirs in memory
// where the machine allows it (see testtools.MemoryTempDir), collecting garbage
// less often (see testtools.CollectLess).
func TestMain(m *testing.M) {
	cleanup := testtools.MemoryTempDir()
	restore := testtools.CollectLess()
	code := m.Run()
	restore()
	cleanup()
	os.Exit(code)
}
