package manifest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeBenchManifest writes lines manifest lines: each seq dispatched then completed.
func writeBenchManifest(tb testing.TB, path string, lines int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range lines {
		seq := i/2 + 1
		phase, task := 1+seq%4, seq%7
		if i%2 == 0 {
			fmt.Fprintf(w, `{"seq":%d,"file":"%d-build-implementer.md","role":"build-implementer","phase":"%d","task":%d,"status":"dispatched","duration_s":null,"summary":null,"input_chars":%d,"output_chars":null,"model_tier":"opus","tool_calls":null}`+"\n", seq, seq, phase, task, 10000+seq)
		} else {
			fmt.Fprintf(w, `{"seq":%d,"file":"%d-build-implementer.md","role":"build-implementer","phase":"%d","task":%d,"status":"completed","duration_s":%d.5,"summary":"Task %d done, %d tests pass","input_chars":%d,"output_chars":%d,"model_tier":"opus","tool_calls":%d}`+"\n", seq, seq, phase, task, seq%600, task, seq%9, 10000+seq, 4000+seq, seq%40)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRead100k reads and dedupes a 100,000-line manifest (50,000 seqs).
// Compare with bench/manifest.sh, which times the binary against jq on the same shape.
func BenchmarkRead100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), ManifestFile)
	writeBenchManifest(b, path, 100_000)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		m, err := Read(path)
		if err != nil || len(m.Entries) != 50_000 {
			b.Fatalf("read: %v", err)
		}
	}
}

// BenchmarkParseLine parses one line on its own, as ParseLine, Entry.UnmarshalJSON
// and each line FindLast reads do: its allocations are those of one entry.
func BenchmarkParseLine(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"dispatched", `{"seq":12,"file":"12-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"dispatched","duration_s":null,"summary":null,"input_chars":13980,"output_chars":null,"model_tier":"opus","tool_calls":null}`},
		{"completed", `{"seq":12,"file":"12-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"completed","duration_s":388,"summary":"Task 2 done, 5 tests","input_chars":13980,"output_chars":4870,"model_tier":"opus","tool_calls":27}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			line := []byte(tc.line)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseLine(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
