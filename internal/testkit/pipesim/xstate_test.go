package pipesim

import (
	"os"
	"strconv"
	"testing"
)

// TestXShapeFrequencies prints how often the scenario generator makes each
// shape it decides before the run (bench/sim.sh prints it; REPLAY_XSHAPES_SEEDS
// seeds, 2,000 by default) and checks that every one is made.
func TestXShapeFrequencies(t *testing.T) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("REPLAY_XSHAPES_SEEDS")); err == nil && v > 0 {
		n = v
	}
	counts := XShapeFrequencies(1, n)
	t.Logf("scenario shapes over %d seeds:\n%s", n, FormatShapeFrequencies(counts, n))
	for _, want := range []string{"state-files", "branch-mismatch", "dispatch-file-missing", "older-run-same-branch", "two-live-sessions", "phases-named-by-words", "task-less-parallel-same-role", "failed-attempt-retried", "wider-longer-than-6x45"} {
		if counts[want] == 0 && n >= 500 {
			t.Errorf("no seed of %d makes %s", n, want)
		}
	}
}
