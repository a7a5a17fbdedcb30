package inproc

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/replaytool/replay/internal/testkit/pipesim"
)

// TestInProcessSeeds runs a few seeds end to end in process: the driver's own
// steps never fail (a finding of check setup or continuation is the adapter's
// or the simulator's bug, not the product's), and the session dies inside the
// re-dispatch on some of them, each such kill followed by another resume of
// the run it left. The e2e test TestSimCrashEquivalence runs the bulk and
// compares this path with the binary's, seed by seed.
func TestInProcessSeeds(t *testing.T) {
	base := t.TempDir()
	kills := 0
	// seeds 17-20, and on until one kills (seed 19 does today)
	const from = 17
	seed := int64(from)
	for ; seed < from+4 || (kills == 0 && seed < from+40); seed++ {
		root := filepath.Join(base, strconv.FormatInt(seed, 10))
		res := pipesim.XRunSeed(seed, root, pipesim.XOptions{Replay: Replay(filepath.Join(root, "systmp")), Agent: AgentName})
		for _, f := range res.Findings {
			if f.Check == "setup" || f.Check == "continuation" {
				t.Errorf("seed %d: the driver failed: %s/%s: %s", seed, f.Check, f.Class, f.Detail)
			}
		}
		if res.Resumes == 0 {
			t.Errorf("seed %d: no resume ran", seed)
		}
		if slices.Contains(res.Shapes, "crash-during-replay-redispatch") {
			kills++
		}
	}
	if kills == 0 {
		t.Errorf("no seed of %d-%d killed the session during a re-dispatch", from, seed-1)
	}
	t.Logf("seeds %d-%d, %d with a kill during the re-dispatch", from, seed-1, kills)
}

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
