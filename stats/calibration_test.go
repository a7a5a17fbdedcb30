package stats

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var calibrationTable = flag.String("calibration-table", "", "write the in-process calibration table between the calibration markers of this markdown file")

// calibrationRuns is how many simulated experiments each cell runs: a small
// number by default, 2,000 with REPLAY_STRESS=1.
func calibrationRuns() int {
	if os.Getenv("REPLAY_STRESS") != "" || *calibrationTable != "" {
		return 2000
	}
	return 200
}

// simArm draws one replica: it passes with chance pass, and its duration is
// log-normal around 10 s times scale (log-sd 0.25), recorded at 0.1 s. giveUp
// fails it whenever its duration is among the slowest share giveUp (a template
// that gives up on slow work). The duration's normal score is returned too.
func simReplica(rng *rand.Rand, pass, scale, giveUp float64) (bool, float64) {
	z := rng.NormFloat64()
	ok := rng.Float64() < pass
	if giveUp > 0 && z > normalQuantile(1-giveUp) {
		ok = false
	}
	return ok, math.Round(10*scale*math.Exp(0.25*z)*10) / 10
}

// arms of one pipeline.
type armsDesign struct {
	basePass, mutPass   float64
	baseScale, mutScale float64
	mutGiveUp           float64
}

// calibCell is one experiment design and what a false decision is in it.
type calibCell struct {
	name string
	// strata are the pipelines (one for a single replay).
	strata []armsDesign
	// first replicas per arm, then one more at a time up to last (first ==
	// last: a fixed design), looking after each.
	first, last int
	// wrong is the verdict that would be a false decision ("any": adopt or reject).
	wrong, right string
}

func calibrationCells() []calibCell {
	noop := armsDesign{0.9, 0.9, 1, 1, 0}
	return []calibCell{
		{name: "no-op, 10 replicas per arm", strata: []armsDesign{noop}, first: 10, last: 10, wrong: "any"},
		{name: "no-op, a user who adds replicas until decided or 40, looking after every one", strata: []armsDesign{noop}, first: 3, last: 40, wrong: "any"},
		{name: "no-op corpus: 3 pipelines of different difficulty (pass 0.95, 0.7, 0.5; 1x, 1.5x, 2x slower), 10 replicas each", strata: []armsDesign{
			{0.95, 0.95, 1, 1, 0}, {0.7, 0.7, 1.5, 1.5, 0}, {0.5, 0.5, 2, 2, 0}}, first: 10, last: 10, wrong: "any"},
		{name: "survivor template: gives up on its slowest 24% (pass 0.95 -> 0.72), no real speed change, until decided or 40", strata: []armsDesign{{0.95, 0.95, 1, 1, 0.24}}, first: 3, last: 40, wrong: Adopt, right: Reject},
		{name: "truly worse: pass 0.83 -> 0.08, until decided or 40", strata: []armsDesign{{0.83, 0.08, 1, 1, 0}}, first: 3, last: 40, wrong: Adopt, right: Reject},
		{name: "truly faster: duration halved, pass 0.9 both, until decided or 40", strata: []armsDesign{{0.9, 0.9, 1, 0.5, 0}}, first: 3, last: 40, wrong: Reject, right: Adopt},
	}
}

type calibResult struct {
	cell          calibCell
	runs, wrong   int
	right         int
	replicasTotal int
}

func runCell(c calibCell, runs int, seed uint64) calibResult {
	res := calibResult{cell: c, runs: runs}
	r := DefaultRule()
	r.Resolution = 0.1
	for i := range runs {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		base, mut := make([]Arm, len(c.strata)), make([]Arm, len(c.strata))
		verdict := Undecided
		n := 0
		for n = 1; n <= c.last; n++ {
			for k, s := range c.strata {
				ok, d := simReplica(rng, s.basePass, s.baseScale, 0)
				base[k].Passed, base[k].Metric = append(base[k].Passed, ok), append(base[k].Metric, d)
				ok, d = simReplica(rng, s.mutPass, s.mutScale, s.mutGiveUp)
				mut[k].Passed, mut[k].Metric = append(mut[k].Passed, ok), append(mut[k].Metric, d)
			}
			if n < c.first {
				continue
			}
			if v := r.DecideStratified(base, mut).Verdict; v != Undecided {
				verdict = v
				break
			}
		}
		res.replicasTotal += min(n, c.last)
		switch {
		case verdict == Undecided:
		case c.wrong == "any" || verdict == c.wrong:
			res.wrong++
		case verdict == c.right:
			res.right++
		}
	}
	return res
}

// TestCalibration: in every cell, the false-decision rate's upper 95% bound
// is at most 7% (alpha 5%): fixed, with a user who keeps adding replicas, over
// a corpus of unlike pipelines, against a survivor template, a worse and a
// faster one.
func TestCalibration(t *testing.T) {
	t.Parallel()
	runs := calibrationRuns()
	var rows []calibResult
	for i, c := range calibrationCells() {
		res := runCell(c, runs, uint64(1000+i))
		rows = append(rows, res)
		up := Wilson(res.wrong, res.runs, 0.95).Hi
		assert.LessOrEqual(t, up, 0.07, "%s: %d false decisions in %d", c.name, res.wrong, res.runs)
		t.Logf("%s: %d/%d false (upper %.3f), %d right", c.name, res.wrong, res.runs, up, res.right)
	}
	if *calibrationTable != "" {
		require.NoError(t, writeBetween(*calibrationTable, "<!-- calibration:begin -->", "<!-- calibration:end -->", calibrationMarkdown(rows)))
	}
}

func calibrationMarkdown(rows []calibResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by `go test ./stats -run Calibration -calibration-table ../docs/ab-statistics.md` (%d seeded experiments per cell, alpha 0.05; durations log-normal, log-sd 0.25, recorded at 0.1 s). A false decision is an ADOPT or REJECT of a no-op, an ADOPT of a worse or survivor template, a REJECT of a faster one; the bound is the upper end of the 95%% Wilson interval.\n\n", rows[0].runs)
	b.WriteString("| Cell | Experiments | False decisions | Rate | 95% upper bound | Decided right | Replicas per arm (mean) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		right := "-"
		if r.cell.right != "" {
			right = fmt.Sprintf("%s %.1f%%", r.cell.right, 100*float64(r.right)/float64(r.runs))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f%% | %.2f%% | %s | %.1f |\n", r.cell.name, r.runs, r.wrong, 100*float64(r.wrong)/float64(r.runs),
			100*Wilson(r.wrong, r.runs, 0.95).Hi, right, float64(r.replicasTotal)/float64(r.runs))
	}
	return b.String()
}

// writeBetween replaces the text between two marker lines of a file.
func writeBetween(path, begin, end, text string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: markers %s and %s not found", path, begin, end)
	}
	return os.WriteFile(path, []byte(s[:i+len(begin)]+"\n"+text+s[j:]), 0o644)
}
