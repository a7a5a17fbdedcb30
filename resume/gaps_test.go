package resume

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/report"
)

func TestMissingRangesAndTheirDescription(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		present []int
		top     int
		torn    int
		want    string
	}{
		{"no gap", []int{3, 1, 2, 2}, 3, 0, ""},
		{"one torn seq", []int{1, 2}, 3, 3, "seq 3 (only in the torn last line)"},
		{"a huge range", []int{1, 14, 14, 100_000_000}, 100_000_000, 0, "seqs 2–13 and 15–99,999,999"},
		{"torn inside a range", []int{1}, 5, 4, "seqs 2–5 (seq 4 only in the torn last line)"},
		{"many gaps", []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}, 24, 0,
			"seqs 1, 3, 5, 7, 9, 11, 13, 15, 17 and 19, and 2 more gaps (12 seqs missing in all)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, describeGaps(missingRanges(c.present, c.top), c.torn))
		})
	}
}

// hugeSeqManifest writes a manifest of a few real lines plus one line with a seq just
// under the limit and one far above it, and returns its path.
func hugeSeqManifest(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "crucible-dispatch-1775400000")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var b strings.Builder
	for seq := 1; seq <= 3; seq++ {
		fmt.Fprintf(&b, `{"seq":%d,"file":"%d-build-implementer.md","role":"implementer","phase":"3","task":1,"status":"completed"}`+"\n", seq, seq)
	}
	b.WriteString(`{"seq":9999999,"file":"9999999-build-implementer.md","role":"implementer","phase":"3","task":1,"status":"completed"}` + "\n")
	b.WriteString(`{"seq":100000000,"file":"1-build-implementer.md","role":"implementer","phase":"3","status":"dispatched"}` + "\n")
	path := filepath.Join(dir, "manifest.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func TestLoadDescribesAHugeSeqGapAndRefusesASeqAboveTheLimit(t *testing.T) {
	t.Parallel()
	path := hugeSeqManifest(t)
	pl, err := Load(Options{Path: path, Cwd: filepath.Dir(path)})
	require.NoError(t, err)
	all := strings.Join(pl.Warnings, "\n")
	assert.Contains(t, all, "seq gap: no valid manifest line and no dispatch file for seqs 4–9,999,998;")
	assert.Contains(t, all, `line 5: corrupt line skipped: "seq" 100000000 is out of range (0 to 10000000)`)
	assert.Less(t, len(all), 4096, "the warnings stay short")
	assert.Equal(t, 10_000_000, pl.NextSeq, "the refused seq does not count")
}

func TestLoadAllocationsDoNotGrowWithTheHighestSeq(t *testing.T) {
	path := hugeSeqManifest(t)
	var plan bytes.Buffer
	allocs := testing.AllocsPerRun(3, func() {
		pl, err := Load(Options{Path: path, Cwd: filepath.Dir(path)})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Decide(pl, "", 0, time.Date(2026, 4, 7, 15, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		plan.Reset()
		if err := report.WritePlanMarkdown(&plan, BuildPlan(pl, a, nil)); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("load, decide and plan: %.0f allocations", allocs)
	// Enumerating the gap allocated one string per missing seq (about ten million).
	assert.Less(t, allocs, 20_000.0, "load, decide and plan of a 5-line manifest made %.0f allocations", allocs)
	assert.Less(t, plan.Len(), 16<<10, "the plan stays small")
}

func BenchmarkLoadHugeSeq(b *testing.B) {
	path := hugeSeqManifest(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(Options{Path: path, Cwd: filepath.Dir(path)}); err != nil {
			b.Fatal(err)
		}
	}
}
