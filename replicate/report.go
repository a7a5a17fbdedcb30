package replicate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/stats"
)

// JSONLFile is the log, beside the manifest, that every replicated A/B replay
// appends its result to as one JSON line.
const JSONLFile = "replay-ab-replicas.jsonl"

// Write saves res beside the manifest in dir: the markdown report in
// replay-ab-<first replica's session>.md and one line appended to JSONLFile.
func Write(dir string, res *Result) error {
	var md strings.Builder
	if err := WriteMarkdown(&md, res); err != nil {
		return err
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	name := "replay-ab-" + res.Replicas[0].Session + ".md"
	if err := safewrite.WriteAtomicIn(dir, name, []byte(md.String())); err != nil {
		return err
	}
	res.Files = &Files{Markdown: filepath.Join(dir, name), JSONL: filepath.Join(dir, JSONLFile)}
	return safewrite.AppendLine(res.Files.JSONL, line)
}

// WriteMarkdown writes res as a markdown report, the run's text escaped: the
// file's form (WriteReport with markdown tables).
func WriteMarkdown(w io.Writer, res *Result) error {
	return WriteReport(w, res, report.TableStyle{})
}

// WriteReport writes res as the markdown report with its tables drawn in style
// (the screen's form on a terminal), the run's text escaped.
func WriteReport(w io.Writer, res *Result, style report.TableStyle) error {
	var b strings.Builder
	n := len(res.Replicas) / 2
	fmt.Fprintf(&b, "# Replicated A/B replay of session %s\n\n", res.Session)
	fmt.Fprintf(&b, "**Generated:** %s\n", res.Generated.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "**Mutations:** %s\n", strings.Join(res.Mutations, "; "))
	fmt.Fprintf(&b, "**Replicas:** %d per arm (%d at once)\n", n, res.Jobs)
	if res.Check != "" {
		fmt.Fprintf(&b, "**Outcome:** exit status of `%s` in each replica's worktree\n", res.Check)
	} else {
		b.WriteString("**Outcome:** the pipeline's acceptance verdict (PASS, and not stopped)\n")
	}
	if res.Continued > 0 {
		fmt.Fprintf(&b, "**Experiment:** %s, continued from %d replicas per arm\n", res.Experiment, res.Continued)
	} else if res.Experiment != "" {
		fmt.Fprintf(&b, "**Experiment:** %s (the same command again, or --more N, adds replicas to it)\n", res.Experiment)
	}
	d := res.Decision
	fmt.Fprintf(&b, "\n## Decision: %s\n\nStep %d of the rule: %s.\n\n", strings.ToUpper(d.Verdict), d.Step, d.Reason)
	writeStatistics(&b, d)
	fmt.Fprintf(&b, "Rule (metric %s, lower is better):\n\n%s\n", res.Metric, res.RuleText)
	conf := confText(d.Alpha)
	b.WriteString("## Pass rates\n\n")
	var rows [][]string
	for _, arm := range []struct {
		name string
		r    stats.RateStats
	}{{"baseline", d.BaselinePass}, {"mutated", d.MutatedPass}} {
		iv := "no replica"
		if arm.r.N > 0 {
			iv = fmt.Sprintf("[%.3f, %.3f]", arm.r.Interval.Lo, arm.r.Interval.Hi)
		}
		rows = append(rows, []string{arm.name, fmt.Sprintf("%d/%d", arm.r.Passed, arm.r.N), fixed(arm.r.Rate, 2), iv})
	}
	if err := style.Write(&b, []string{"Arm", "Passed", "Rate", conf + " confidence sequence"}, rows); err != nil {
		return err
	}
	b.WriteString("\n")
	if err := writeTables(&b, res, style); err != nil {
		return err
	}
	_, err := io.WriteString(w, report.SafeText(b.String()))
	return err
}

// writeStatistics writes what the decision rests on (StatisticsLines).
func writeStatistics(b *strings.Builder, d stats.Decision) {
	b.WriteString("### Statistics\n\n")
	for _, line := range StatisticsLines(d) {
		fmt.Fprintf(b, "- %s\n", line)
	}
	b.WriteString("\n")
}

// StatisticsLines are what decision d rests on, one sentence each, as every
// report prints them: the level, the tests with their evidence (e-values) and
// the confidence sequences of the effects, and, when undecided, how many more
// replicas would likely tell. Nothing that was not computed is printed.
func StatisticsLines(d stats.Decision) []string {
	conf := confText(d.Alpha)
	lines := []string{fmt.Sprintf("Alpha: %g: the chance of any false ADOPT or REJECT between arms that do not differ, at any number of replicas and whenever the experiment stops; three tests, each deciding when its evidence (an e-value) reaches %s. Intervals are %s confidence sequences: each holds the true value with that chance however many replicas are added.",
		d.Alpha, eNum(float64(d.Threshold)), conf)}
	p := d.Pass
	lines = append(lines, fmt.Sprintf("Pass rate: mutated %d/%d, baseline %d/%d over %d pairs; difference %s, %s; of the %d pairs where exactly one replica passed, the baseline's did in %d: evidence %s that the mutated arm passes less often.",
		d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N, d.Pairs, signed(float64(p.Diff), 2), intervalText(p.Interval, 2), p.BaselineOnly+p.MutatedOnly, p.BaselineOnly, eNum(float64(p.EWorse))))
	c := d.Composite
	share := "no untied pair yet"
	if !math.IsNaN(float64(c.WinShare)) {
		share = fmt.Sprintf("the mutated arm's share of the untied pairs %s, %s", fixed(float64(c.WinShare), 2), intervalText(c.Interval, 2))
	}
	lines = append(lines, fmt.Sprintf("Composite outcome (a failure is worse than any pass; passing pairs compared by the metric at resolution %g): mutated won %d pairs, baseline %d, %d tied; %s; evidence %s that the mutated arm is worse, %s that it is better.",
		c.Resolution, c.MutatedWins, c.BaselineWins, c.Ties, share, eNum(float64(c.EWorse)), eNum(float64(c.EBetter))))
	if m := d.Metric; m != nil {
		lines = append(lines, fmt.Sprintf("Metric over the passing replicas: median %s (mutated) against %s (baseline); over the %d pairs where both passed, the median difference (mutated minus baseline) lies in %s (descriptive: the composite outcome decides).",
			num(m.Mutated.Median), num(m.Baseline.Median), m.BothPassed, shiftText(m.Shift)))
	} else {
		lines = append(lines, "Metric: not compared (an arm has no passing replica).")
	}
	if d.More != nil {
		lines = append(lines, "Undecided: "+d.More.Text+".")
	}
	return lines
}

// confText is the confidence 1 - alpha in words: "95%".
func confText(alpha float64) string {
	return strconv.FormatFloat(100*(1-alpha), 'g', 4, 64) + "%"
}

// intervalText prints a confidence sequence, or says it was not computed.
func intervalText(iv stats.Interval, digits int) string {
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return "no confidence sequence (no replica)"
	}
	return fmt.Sprintf("confidence sequence [%s, %s]", fixed(iv.Lo, digits), fixed(iv.Hi, digits))
}

// shiftText prints the confidence sequence of a median difference.
func shiftText(iv stats.Interval) string {
	switch {
	case math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi):
		return "no interval (no pair where both passed)"
	case math.IsInf(iv.Lo, -1) && math.IsInf(iv.Hi, 1):
		return "not bounded yet (too few pairs)"
	case math.IsInf(iv.Lo, -1):
		return fmt.Sprintf("(-inf, %s] (too few pairs to bound it below)", num(iv.Hi))
	case math.IsInf(iv.Hi, 1):
		return fmt.Sprintf("[%s, +inf) (too few pairs to bound it above)", num(iv.Lo))
	}
	return fmt.Sprintf("[%s, %s]", num(iv.Lo), num(iv.Hi))
}

func fixed(x float64, digits int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

func signed(x float64, digits int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.*f", digits, x)
}

// eNum prints an e-value briefly.
func eNum(e float64) string {
	switch {
	case math.IsNaN(e):
		return "-"
	case e >= 1e6:
		return "over 1,000,000"
	case e >= 100:
		return fmt.Sprintf("%.0f", e)
	}
	return fmt.Sprintf("%.3g", e)
}

// RuleStep is step n's line of a rule in words (stats.Rule.Text), without its
// number; "" when there is none.
func RuleStep(ruleText string, n int) string {
	prefix := strconv.Itoa(n) + ". "
	for line := range strings.SplitSeq(ruleText, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest
		}
	}
	return ""
}

// writeTables writes the report's sections after the pass rates.
func writeTables(b *strings.Builder, res *Result, style report.TableStyle) error {
	if err := writeMetrics(b, res, style); err != nil {
		return err
	}
	if err := writePerDispatch(b, res, style); err != nil {
		return err
	}
	if err := writeNoise(b, res, style); err != nil {
		return err
	}
	return writeReplicas(b, res, style)
}

func writeMetrics(b *strings.Builder, res *Result, style report.TableStyle) error {
	b.WriteString("## Metrics\n\nMedian [Q1, Q3] per arm over the passing replicas (a failed replica is its own outcome, never a value), rounded to the metric's resolution; the last column is the " + confText(res.Rule.Alpha) + " confidence sequence of the median difference (mutated minus baseline) over the pairs where both replicas passed. Descriptive: the decision rests on the composite outcome.\n\n")
	var rows [][]string
	for _, m := range res.Metrics {
		name := m.Metric
		if m.Decides {
			name += " (decides)"
		}
		side := func(s stats.Summary) string {
			if s.N == 0 {
				return "no passing replica"
			}
			return fmt.Sprintf("%s [%s, %s]", num(s.Median), num(s.Q1), num(s.Q3))
		}
		rows = append(rows, []string{name, side(m.Baseline), side(m.Mutated), fmt.Sprint(m.BothPassed), shiftText(m.Shift)})
	}
	if err := style.Write(b, []string{"Metric", "Baseline", "Mutated", "Pairs both passed", "Median difference"}, rows); err != nil {
		return err
	}
	b.WriteString("\nTool calls: not recorded (no agent reports them in its response).\n\n")
	if len(res.PhaseRounds) > 0 {
		b.WriteString("### Gate rounds per phase (median)\n\n")
		rows = rows[:0]
		for _, p := range res.PhaseRounds {
			rows = append(rows, []string{orDash(p.Phase), num(p.Baseline), num(p.Mutated)})
		}
		if err := style.Write(b, []string{"Phase", "Baseline", "Mutated"}, rows); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	return nil
}

func writePerDispatch(b *strings.Builder, res *Result, style report.TableStyle) error {
	b.WriteString("## Per dispatch (medians over the replicas that re-ran it)\n\n")
	var rows [][]string
	for _, d := range res.Dispatches {
		side := func(runs int, x float64) string {
			if runs == 0 {
				return "did not run"
			}
			return num(x)
		}
		rows = append(rows, []string{fmt.Sprint(d.ReplayOf), d.Role, fmt.Sprintf("%d / %d", d.BaselineRuns, d.MutatedRuns),
			side(d.BaselineRuns, d.BaselineDuration) + " / " + side(d.MutatedRuns, d.MutatedDuration),
			side(d.BaselineRuns, d.BaselineInput) + " / " + side(d.MutatedRuns, d.MutatedInput)})
	}
	if err := style.Write(b, []string{"Dispatch (replay of)", "Role", "Runs (baseline / mutated)", "Duration s", "Input chars"}, rows); err != nil {
		return err
	}
	b.WriteString("\nOutput chars per dispatch are in the JSON result.\n\n")
	return nil
}

func writeNoise(b *strings.Builder, res *Result, style report.TableStyle) error {
	nz := res.Noise
	b.WriteString("## Noise floor and effect\n\n")
	fmt.Fprintf(b, "Determinism of the outcome (share of replicas equal to the arm's most common one): baseline %.2f, mutated %.2f. ", nz.BaselineOutcome, nz.MutatedOutcome)
	fmt.Fprintf(b, "The baseline column is run-to-run noise (baseline against baseline). A dispatch is marked as an effect when Fisher's exact test of the share of runs ending in the baseline's usual outcome, adjusted by Holm's method over the %d dispatches, is below alpha %g (exploratory: it does not decide).\n\n", len(nz.Dispatches), res.Rule.Alpha)
	var rows [][]string
	for _, d := range nz.Dispatches {
		effect := "-"
		if d.Effect {
			effect = "yes"
		}
		score := func(runs int, x float64) string {
			if runs == 0 {
				return "did not run"
			}
			return fmt.Sprintf("%.2f", x)
		}
		rows = append(rows, []string{fmt.Sprint(d.ReplayOf), d.Role, score(d.BaselineRuns, d.Baseline), orDash(d.BaselineMode), score(d.MutatedRuns, d.Mutated), orDash(d.MutatedMode), num(d.HolmP), effect})
	}
	if err := style.Write(b, []string{"Dispatch (replay of)", "Role", "Baseline determinism", "Baseline usual outcome", "Mutated determinism", "Mutated usual outcome", "Holm p", "Effect"}, rows); err != nil {
		return err
	}
	b.WriteString("\n")
	return nil
}

func writeReplicas(b *strings.Builder, res *Result, style report.TableStyle) error {
	b.WriteString("## Replicas\n\n")
	var rows [][]string
	for _, r := range res.Replicas {
		outcome := "fail"
		if r.Passed {
			outcome = "pass"
		}
		if r.CheckExit != nil {
			outcome += fmt.Sprintf(" (check exit %d)", *r.CheckExit)
		}
		art := "-"
		if r.Artifact != nil {
			art = fmt.Sprintf("%d files +%d -%d", r.Artifact.FilesChanged, r.Artifact.Insertions, r.Artifact.Deletions)
		}
		rows = append(rows, []string{r.Arm, fmt.Sprint(r.Index), r.Session, outcome, r.Verdict,
			fmt.Sprint(r.GateRounds), fmt.Sprint(r.Findings), num(r.DurationS), fmt.Sprint(r.InputChars), fmt.Sprint(r.OutputChars), art})
	}
	if err := style.Write(b, []string{"Arm", "#", "Session", "Outcome", "Verdict", "Gate rounds", "Findings", "Duration s", "Input chars", "Output chars", "Artifact diff"}, rows); err != nil {
		return err
	}
	b.WriteString("\nEach replica's worktree and branch are kept under replay-worktrees/ in the scratch dir.\n")
	return nil
}

// num prints a number briefly: up to 4 significant digits, "-" for NaN.
func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
