package checkpoint

import (
	"context"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPreview measures the read-only preview a restore computes before it asks,
// across 5% changed files: its cost is what the preview adds to every restore.
func BenchmarkPreview(b *testing.B) {
	n := benchFiles()
	p := newBenchProject(b, n)
	s, err := openOrInit(p.shadow, p.dir)
	if err != nil {
		b.Fatal(err)
	}
	cp, _, err := s.Create(CreateOptions{Reason: "first", Now: clockAt(0)})
	if err != nil {
		b.Fatal(err)
	}
	mutateBench(b, p, n, n/20, 1)
	time.Sleep(10 * time.Millisecond) // past the stat cache's racy window
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pv, err := s.Preview(*cp)
		if err != nil {
			b.Fatal(err)
		}
		if pv.OverwriteCount != n/20 {
			b.Fatalf("preview counts %d files to overwrite, want %d", pv.OverwriteCount, n/20)
		}
	}
}

// BenchmarkRestoreYes is BenchmarkRestore answered by --yes, where the restore
// reuses the preview's walk of the working tree.
func BenchmarkRestoreYes(b *testing.B) {
	n := benchFiles()
	p := newBenchProject(b, n)
	s, err := openOrInit(p.shadow, p.dir)
	if err != nil {
		b.Fatal(err)
	}
	cp, _, err := s.Create(CreateOptions{Reason: "first", Now: clockAt(0)})
	if err != nil {
		b.Fatal(err)
	}
	cpu := &cpuMeter{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu.stop(b)
		mutateBench(b, p, n, n/20, i+1)
		cpu.start(b)
		var err error
		// Labelled so a profile can keep the timed part alone: -tagfocus timed.
		pprof.Do(context.Background(), pprof.Labels("part", "timed"), func(context.Context) {
			_, err = s.Restore(*cp, RestoreOptions{Yes: true, Session: strconv.Itoa(i), Now: clockAt(time.Duration(i+1) * time.Minute)})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b)
	cpu.report(b)
}
