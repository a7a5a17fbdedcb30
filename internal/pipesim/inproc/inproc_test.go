package inproc

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/replaytool/replay/internal/pipesim"
)

// BenchmarkXRunSeed runs seeds 1..N of the end-to-end crash simulator in
// process, one after the other: ns/op is the cost of one seed on one core.
func BenchmarkXRunSeed(b *testing.B) {
	base := b.TempDir()
	for i := 0; i < b.N; i++ {
		seed := int64(1 + i%200)
		root := filepath.Join(base, strconv.Itoa(i))
		pipesim.XRunSeed(seed, root, pipesim.XOptions{Replay: Replay(filepath.Join(root, "systmp")), Agent: AgentName})
	}
}
