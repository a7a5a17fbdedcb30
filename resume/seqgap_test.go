package resume

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// hugeSeqManifest writes the huge-seq manifest under a temporary directory.
func hugeSeqManifest(t testing.TB) string {
	t.Helper()
	path, err := fixture.HugeSeqManifest(t.TempDir())
	require.NoError(t, err)
	return path
}

// Not parallel: AllocsPerRun refuses to run beside parallel tests.
func TestLoadAllocationsDoNotGrowWithTheHighestSeq(t *testing.T) {
	path := hugeSeqManifest(t)
	var plan bytes.Buffer
	allocs := testing.AllocsPerRun(3, func() {
		pl, err := pipeline.Load(pipeline.Options{Path: path, Cwd: filepath.Dir(path)})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Decide(pl, "", 0, time.Date(2026, 4, 7, 15, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		plan.Reset()
		if err := report.WritePlan(&plan, BuildPlan(a, nil), report.TableStyle{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("load, decide and plan: %.0f allocations", allocs)
	// Enumerating the gap allocated one string per missing seq (about ten million).
	assert.Less(t, allocs, 20_000.0, "load, decide and plan of a 5-line manifest made %.0f allocations", allocs)
	assert.Less(t, plan.Len(), 16<<10, "the plan stays small")
}
