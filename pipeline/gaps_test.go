package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// hugeSeqManifest writes the huge-seq manifest under a temporary directory.
func hugeSeqManifest(t testing.TB) string {
	t.Helper()
	path, err := fixture.HugeSeqManifest(t.TempDir())
	require.NoError(t, err)
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

func BenchmarkLoadHugeSeq(b *testing.B) {
	path := hugeSeqManifest(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(Options{Path: path, Cwd: filepath.Dir(path)}); err != nil {
			b.Fatal(err)
		}
	}
}
