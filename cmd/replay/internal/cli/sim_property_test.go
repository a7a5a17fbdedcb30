package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/pipesim"
	"github.com/replaytool/replay/internal/testkit/simplan"
)

// simSeeds is how many generated runs the property test judges: 200 by default
// (issue 36: the README's go test ./... keeps its minute with >= 200 seeds),
// 100,000 with REPLAY_STRESS=1, or REPLAY_SIM_SEEDS; from seed 1, or
// REPLAY_SIM_FIRST.
func simSeeds() (first int64, n int, execEvery int) {
	first, n, execEvery = 1, 200, 10
	if v, err := strconv.ParseInt(os.Getenv("REPLAY_SIM_FIRST"), 10, 64); err == nil && v > 0 {
		first = v
	}
	if os.Getenv("REPLAY_STRESS") == "1" {
		n, execEvery = 100000, 1
	}
	if v, err := strconv.Atoi(os.Getenv("REPLAY_SIM_SEEDS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("REPLAY_SIM_EXEC_EVERY")); err == nil && v > 0 {
		execEvery = v
	}
	return first, n, execEvery
}

// simResult is the judgement of one seed.
type simResult struct {
	seed      int64
	verdict   pipesim.Verdict
	ambiguous []string
	err       string
}

// TestSimulatedRunsResume generates crashed runs from seeds (pipesim), asks
// `replay plan --json` for the decision on each, executes the resume on every
// execEvery-th seed (every seed under REPLAY_STRESS=1), and checks the
// properties of issue 28 against the generator's truth:
//
//   - safe: never a boundary later than the truth, never skipping work that is
//     not on disk; zero exceptions;
//   - precise: the boundary and the work items equal the truth in >= 99% of
//     seeds; every earlier boundary is explained by a named failed check on a
//     dispatch the generator made genuinely ambiguous;
//   - one decision: the items the resume executes equal the plan's;
//   - no reuse: the next seq is above every seq used anywhere.
//
// A failing seed is printed with the command that writes its run to a directory.
func TestSimulatedRunsResume(t *testing.T) {
	t.Parallel()
	first, n, execEvery := simSeeds()
	base := t.TempDir()
	results := make([]simResult, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				seed := first + i
				results[i] = judgeSeed(t, filepath.Join(base, strconv.FormatInt(seed, 10)), seed, seed%int64(execEvery) == 0)
			}
		}()
	}
	wg.Wait()
	report, failed := summarizeSim(results)
	if path := os.Getenv("REPLAY_SIM_DUMP"); path != "" {
		dumpSim(t, path, results)
	}
	head := fmt.Sprintf("%d seeds in %s (resume executed on every %d. seed)", n, time.Since(start).Round(time.Millisecond), execEvery)
	if failed {
		t.Errorf("%s; the runs break the resume properties:\n%s", head, report)
	} else {
		t.Logf("%s\n%s", head, report)
	}
}

// judgeSeed generates seed's run under dir, asks replay for its decision and
// judges it; the run is removed afterwards.
func judgeSeed(t *testing.T, dir string, seed int64, execute bool) simResult {
	defer os.RemoveAll(dir)
	res := simResult{seed: seed}
	tr, err := pipesim.Generate(seed, dir)
	if err != nil {
		res.err = "generate: " + err.Error()
		return res
	}
	p, code, stderr := runSimPlan(t, dir, tr)
	if code != 0 && p.NextSeq == 0 {
		res.err = fmt.Sprintf("plan exit %d: %s", code, simFirstLine(stderr))
		return res
	}
	d := pipesim.Decision{Checkpoint: p.Checkpoint, NextSeq: p.NextSeq, Failed: simFailed(p.FailedVerifications), Notes: p.Warnings, Refuses: p.refuses(),
		Skip: simplan.Seqs(p.Skip), Redo: simplan.Seqs(p.Redo)}
	if execute {
		var code int
		var stderr string
		d.Executed, d.Unlinked, code, stderr = runSimResume(t, dir, tr)
		d.Ran, d.Said = true, fmt.Sprintf("exit %d: %s", code, simLastLine(stderr))
		simplan.CountSkillRuns(&d, p.Redo)
	}
	res.verdict = pipesim.Judge(tr, d)
	for _, a := range tr.Ambiguities {
		res.ambiguous = append(res.ambiguous, a.Check)
	}
	return res
}

func simLastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func simFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// summarizeSim counts the findings by property and class, with up to three
// example seeds each, and says whether the properties fail.
func summarizeSim(results []simResult) (string, bool) {
	type class struct {
		n        int
		examples []string
	}
	classes := map[string]*class{}
	note := func(key string, seed int64, detail string) {
		c := classes[key]
		if c == nil {
			c = &class{}
			classes[key] = c
		}
		c.n++
		if len(c.examples) < 3 {
			c.examples = append(c.examples, fmt.Sprintf("seed %d: %s", seed, detail))
		}
	}
	boundary, exact, explained, ambiguous, findings := 0, 0, 0, 0, 0
	for _, r := range results {
		if r.err != "" {
			note("error/"+strings.SplitN(r.err, ":", 2)[0], r.seed, r.err)
			findings++
			continue
		}
		if r.verdict.Boundary {
			boundary++
		}
		if r.verdict.Exact {
			exact++
		}
		if r.verdict.Explained {
			explained++
		}
		if len(r.ambiguous) > 0 {
			ambiguous++
		}
		for _, f := range r.verdict.Findings {
			note(f.Property+"/"+f.Class, r.seed, f.Detail)
			findings++
		}
	}
	var b strings.Builder
	n := len(results)
	pct := func(k int) float64 { return 100 * float64(k) / float64(max(n, 1)) }
	fmt.Fprintf(&b, "boundary equals the truth %d/%d (%.1f%%, precise needs >= 99%%); boundary and work items exact %d (%.1f%%); earlier but explained by an ambiguity %d (seeds with an ambiguity in effect: %d); findings %d\n",
		boundary, n, pct(boundary), exact, pct(exact), explained, ambiguous, findings)
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if classes[keys[i]].n != classes[keys[j]].n {
			return classes[keys[i]].n > classes[keys[j]].n
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-45s %d\n", k, classes[k].n)
		for _, e := range classes[k].examples {
			fmt.Fprintf(&b, "      %s\n", e)
		}
	}
	b.WriteString("  debug a seed: go run ./internal/testkit/pipesim/cmd/simrun -seed N -out DIR (prints the truth and the replay command)\n")
	failed := findings > 0 || float64(boundary) < 0.99*float64(n)
	return b.String(), failed
}

// dumpSim writes one JSON line per seed (its findings' classes, its
// ambiguities, whether the boundary was the truth's) to path, for picking
// example seeds per class (REPLAY_SIM_DUMP=path).
func dumpSim(t *testing.T, path string, results []simResult) {
	var b strings.Builder
	for _, r := range results {
		var classes []string
		for _, f := range r.verdict.Findings {
			classes = append(classes, f.Property+"/"+f.Class)
		}
		line, _ := json.Marshal(map[string]any{"seed": r.seed, "classes": classes, "ambiguities": r.ambiguous,
			"boundary": r.verdict.Boundary, "explained": r.verdict.Explained, "error": r.err, "findings": r.verdict.Findings})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("REPLAY_SIM_DUMP: %v", err)
	}
}
