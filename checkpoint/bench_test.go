package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// benchFiles is the size of the benchmark tree; BENCH_FILES overrides it.
func benchFiles() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_FILES")); err == nil && n > 0 {
		return n
	}
	return 3000
}

func benchContent(i, version int) []byte {
	return []byte(fmt.Sprintf("package p // file %d version %d\nvar v = %q\n", i, version, make([]byte, i%500)))
}

// newBenchProject writes n files in 100-file directories plus an ignored node_modules.
func newBenchProject(b *testing.B, n int) *testProject {
	b.Helper()
	t := &testing.T{}
	root := b.TempDir()
	p := &testProject{t: t, root: root, dir: filepath.Join(root, "project"), shadow: filepath.Join(root, "shadow")}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(p.dir, 0o755))
	must(os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte("node_modules/\n"), 0o644))
	for i := 0; i < n; i++ {
		path := p.abs(fmt.Sprintf("src/d%03d/f%05d.go", i/100, i))
		must(os.MkdirAll(filepath.Dir(path), 0o755))
		must(os.WriteFile(path, benchContent(i, 0), 0o644))
	}
	for i := 0; i < n/4; i++ {
		path := p.abs(fmt.Sprintf("node_modules/m%03d/i%d.js", i/50, i))
		must(os.MkdirAll(filepath.Dir(path), 0o755))
		must(os.WriteFile(path, []byte("x"), 0o644))
	}
	if _, ok := testtools.GitIfPresent(b); ok {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "baseline"}} {
			cmd := exec.Command("git", append([]string{"-c", "gc.auto=0"}, args...)...)
			cmd.Dir = p.dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@x")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return p
}

func mutateBench(b *testing.B, p *testProject, n, count, version int) {
	b.Helper()
	for k := 0; k < count; k++ {
		i := k * (n / count)
		if err := os.WriteFile(p.abs(fmt.Sprintf("src/d%03d/f%05d.go", i/100, i)), benchContent(i, version), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate measures a checkpoint after 1% of the files changed (the cache
// path) and reports the git binary's `add -A && commit` on the same tree.
func BenchmarkCreate(b *testing.B) {
	n := benchFiles()
	p := newBenchProject(b, n)
	s, err := openOrInit(p.shadow, p.dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.Create(CreateOptions{Reason: "first", Now: clockAt(0)}); err != nil {
		b.Fatal(err)
	}
	cpu := &cpuMeter{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu.stop(b)
		mutateBench(b, p, n, n/100, i+1)
		cpu.start(b)
		var err error
		// Labelled so a profile can keep the timed part alone: -tagfocus timed.
		pprof.Do(context.Background(), pprof.Labels("part", "timed"), func(context.Context) {
			_, _, err = s.Create(CreateOptions{Reason: "again", Now: clockAt(time.Duration(i+1) * time.Minute)})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b)
	cpu.report(b)
	reportGit(b, p, func(git func(...string)) {
		mutateBench(b, p, n, n/100, b.N+1)
		git("add", "-A")
		git("commit", "-q", "-m", "again")
	})
}

// BenchmarkRestore measures restoring a checkpoint across 5% changed files.
func BenchmarkRestore(b *testing.B) {
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
		if _, err := s.Restore(*cp, RestoreOptions{Confirm: yes, Session: strconv.Itoa(i), Now: clockAt(time.Duration(i+1) * time.Minute)}); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b)
	cpu.report(b)
	reportGit(b, p, func(git func(...string)) {
		mutateBench(b, p, n, n/20, b.N+1)
		git("checkout", "-q", "-f", "HEAD", "--", ".")
		git("clean", "-fdq")
	})
}

// reportGit times op with the git binary on a separate git dir whose first commit is
// the current tree, and reports it as git-ns/op beside ours.
func reportGit(b *testing.B, p *testProject, op func(git func(...string))) {
	b.Helper()
	if _, ok := testtools.GitIfPresent(b); !ok {
		return
	}
	gitDir := filepath.Join(p.root, "gitshadow")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + p.dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+p.root, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	start := time.Now()
	op(git)
	b.ReportMetric(float64(time.Since(start).Nanoseconds()), "git-ns/op")
}

// BenchmarkLargeFile checkpoints and restores one 64 MiB file of incompressible
// bytes: the streamed path. It reports the throughput and, as B/op, what one
// create-and-restore allocates (a small multiple of the stream buffer, not the file).
func BenchmarkLargeFile(b *testing.B) {
	const size = 64 << 20
	root := b.TempDir()
	dir := filepath.Join(root, "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, data, 0o644); err != nil {
		b.Fatal(err)
	}
	data = nil
	s, err := openOrInit(filepath.Join(root, "shadow"), dir)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.Remove(filepath.Join(root, "shadow", cacheFile)) // hash the file again each time
		cp, _, err := s.Create(CreateOptions{Reason: "bench", Now: clockAt(time.Duration(i) * time.Second), Always: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(big); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Restore(*cp, RestoreOptions{Session: strconv.Itoa(i), Confirm: yes, Now: clockAt(time.Duration(i) * time.Second)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateWithFileProgress is BenchmarkCreate with a file progress hook that
// takes a lock per file, as the command line's counter does: the cost of counting.
func BenchmarkCreateWithFileProgress(b *testing.B) {
	n := benchFiles()
	p := newBenchProject(b, n)
	s, err := openOrInit(p.shadow, p.dir)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	seen := 0
	s.SetFileProgress(func(_ string, done, _ int) {
		mu.Lock()
		seen = max(seen, done)
		mu.Unlock()
	})
	if _, _, err := s.Create(CreateOptions{Reason: "first", Now: clockAt(0)}); err != nil {
		b.Fatal(err)
	}
	cpu := &cpuMeter{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu.stop(b)
		mutateBench(b, p, n, n/100, i+1)
		cpu.start(b)
		if _, _, err := s.Create(CreateOptions{Reason: "again", Now: clockAt(time.Duration(i+1) * time.Minute)}); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b)
	cpu.report(b)
	if seen < n {
		b.Fatalf("counted %d files, want at least %d", seen, n)
	}
}

// cpuMeter adds up the process CPU time of the timed parts of a benchmark, which it
// reports as cpu-ns/op beside the wall time: on a shared machine the CPU time moves
// less with the load.
type cpuMeter struct {
	total, from time.Duration
	running     bool
}

func (m *cpuMeter) start(b *testing.B) {
	b.StartTimer()
	m.from, m.running = processCPU(), true
}

func (m *cpuMeter) stop(b *testing.B) {
	b.StopTimer()
	if m.running {
		m.total += processCPU() - m.from
	}
	m.running = false
}

func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(m.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
