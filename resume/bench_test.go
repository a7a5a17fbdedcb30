package resume

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// BenchmarkPlanSynthetic times what `replay plan` does (Load, Decide, BuildPlan and
// the markdown) on a synthetic 2,000-dispatch pipeline over 2,000 and 20,000 commits
// of project history, beside `git log --oneline` on the same repository. The plan's
// time must not grow with the history before the pipeline's window; metrics:
// git-ns/op (median of git log runs) and x-git (plan time / git log time, target ≤ 3).
func BenchmarkPlanSynthetic(b *testing.B) {
	// Each sub-benchmark's function runs several times (b.N grows); its pipeline is
	// built once, in the parent's temp dir, which outlives those runs.
	built := map[int]*fixture.Pipeline{}
	for _, history := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("dispatches=2000/history=%d", history), func(sb *testing.B) {
			p := built[history]
			if p == nil {
				var err error
				p, err = fixture.BuildSynthetic(filepath.Join(b.TempDir(), fmt.Sprint(history)), fixture.SyntheticOptions{Dispatches: 2000, HistoryCommits: history})
				if err != nil {
					sb.Fatal(err)
				}
				built[history] = p
			}
			sb.ResetTimer()
			for i := 0; i < sb.N; i++ {
				if err := planOnce(p); err != nil {
					sb.Fatal(err)
				}
			}
			sb.StopTimer()
			plan := float64(sb.Elapsed().Nanoseconds()) / float64(sb.N)
			if git := gitLogNs(sb, p.Project, history); git > 0 {
				sb.ReportMetric(git, "git-ns/op")
				sb.ReportMetric(plan/git, "x-git")
			}
		})
	}
}

// planOnce is `replay plan` without the process: load, decide, build and render.
func planOnce(p *fixture.Pipeline) error {
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	if err != nil {
		return err
	}
	a, err := Decide(pl, "", 0, p.Now)
	if err != nil {
		return err
	}
	if len(a.Failures) > 0 || a.Checkpoint == nil {
		return fmt.Errorf("synthetic pipeline: %d verification failure(s), checkpoint %v", len(a.Failures), a.Checkpoint)
	}
	return report.WritePlan(io.Discard, BuildPlan(a, nil), report.TableStyle{})
}

// gitLogNs returns the median wall time of `git log --oneline` (its lines counted,
// as `| wc -l` would) on dir over a few runs, or 0 when there is no git binary.
func gitLogNs(b *testing.B, dir string, history int) float64 {
	b.Helper()
	gitBin, ok := testtools.GitIfPresent(b)
	if !ok {
		return 0
	}
	var runs []time.Duration
	for i := 0; i < 7; i++ {
		cmd := exec.Command(gitBin, "-C", dir, "log", "--oneline")
		cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
		start := time.Now()
		out, err := cmd.Output()
		runs = append(runs, time.Since(start))
		if err != nil {
			b.Fatalf("git log in %s: %v", dir, err)
		}
		if n := bytes.Count(out, []byte("\n")); n < history {
			b.Fatalf("git log in %s: %d commits, want at least %d", dir, n, history)
		}
	}
	slices.Sort(runs)
	return float64(runs[len(runs)/2].Nanoseconds())
}
