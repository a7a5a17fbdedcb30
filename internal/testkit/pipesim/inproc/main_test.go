package inproc

import (
	"os"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMain keeps the simulated runs in memory: each seed writes hundreds of
// small files and git objects.
func TestMain(m *testing.M) {
	cleanup := testtools.MemoryTempDir()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
