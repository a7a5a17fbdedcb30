package pipesim

import (
	"os"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMain keeps the generated runs in memory: each seed writes hundreds of
// small files and git objects.
func TestMain(m *testing.M) {
	cleanup := testtools.MemoryTempDir()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
