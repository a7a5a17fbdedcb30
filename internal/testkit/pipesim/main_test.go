package pipesim

import (
	"os"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMain keeps the generated runs in memory (each seed writes hundreds of
// small files and git objects) and collects garbage less often (the generator
// allocates much and keeps little: testtools.CollectLess).
func TestMain(m *testing.M) {
	cleanup := testtools.MemoryTempDir()
	restore := testtools.CollectLess()
	code := m.Run()
	restore()
	cleanup()
	os.Exit(code)
}
