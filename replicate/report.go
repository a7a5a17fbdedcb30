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

// WriteMarkdown writes res as a markdown report, the run's text escaped.
func WriteMarkdown(w io.Writer, res *Result) error {
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
	d := res.Decision
	fmt.Fprintf(&b, "\n## Decision: %s\n\nStep %d of the rule: %s.\n\n", strings.ToUpper(d.Verdict), d.Step, d.Reason)
	writeStatistics(&b, d)
	fmt.Fprintf(&b, "Rule (metric %s, lower is better):\n\n%s\n", res.Metric, res.RuleText)
	conf := fmt.Sprintf("%.4g%%", d.Confidence*100)
	b.WriteString("## Pass rates\n\n| Arm | Passed | Rate | " + conf + " Wilson interval |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| baseline | %d/%d | %.2f | [%.3f, %.3f] |\n", d.BaselinePass.Passed, d.BaselinePass.N, d.BaselinePass.Rate, d.BaselinePass.Wilson.Lo, d.BaselinePass.Wilson.Hi)
	fmt.Fprintf(&b, "| mutated | %d/%d | %.2f | [%.3f, %.3f] |\n", d.MutatedPass.Passed, d.MutatedPass.N, d.MutatedPass.Rate, d.MutatedPass.Wilson.Lo, d.MutatedPass.Wilson.Hi)
	fmt.Fprintf(&b, "\nFisher's exact test (two-sided, descriptive): p = %s\n\n", num(d.FisherP))
	writeMetrics(&b, res)
	writePerDispatch(&b, res)
	writeNoise(&b, res)
	writeReplicas(&b, res)
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
// report prints them: the level and the design, the tests with their one-sided
// p-values and intervals, and the smallest effects the replicas could detect.
func StatisticsLines(d stats.Decision) []string {
	lines := []string{fmt.Sprintf("Alpha: %g (the chance of a false ADOPT or REJECT between arms that do not differ); look %d of %d at %d replicas per arm, spending %.4g; each endpoint tested two-sided at %.4g (one-sided %.4g per direction).",
		d.Alpha, d.Look.K, d.Look.Of, d.Look.N, d.Look.Level, d.EndpointLevel, d.EndpointLevel/2)}
	p := d.Pass
	lines = append(lines, fmt.Sprintf("Pass rate: %s: p (mutated lower) = %s, p (mutated higher) = %s; difference %+.3f, %.4g%% Newcombe interval [%.3f, %.3f].",
		p.Test, num(p.Tails.Less), num(p.Tails.Greater), p.Diff, d.Confidence*100, p.Interval.Lo, p.Interval.Hi))
	if m := d.Metric; m != nil {
		lines = append(lines, fmt.Sprintf("Metric: %s (%d baseline, %d mutated passing replicas): p (mutated higher) = %s, p (mutated lower) = %s; median %s against %s, %.4g%% bootstrap interval of the difference [%s, %s].",
			m.Test, m.Baseline.N, m.Mutated.N, num(m.WorseP), num(m.Tails.Less), num(m.Mutated.Median), num(m.Baseline.Median), d.Confidence*100, num(m.Bootstrap.Lo), num(m.Bootstrap.Hi)))
	} else {
		lines = append(lines, "Metric: not compared (an arm has no passing replica).")
	}
	return append(lines, d.Detectable.Words())
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

func writeMetrics(b *strings.Builder, res *Result) {
	b.WriteString("## Metrics\n\nMedian [Q1, Q3] per arm over the passing replicas (a failed replica is its own outcome, never a value); the difference is mutated minus baseline. Only the deciding metric is tested by the rule; the others are exploratory.\n\n")
	fmt.Fprintf(b, "| Metric | Baseline | Mutated | %.4g%% bootstrap of the median difference | Mann-Whitney U (two-sided p) |\n|---|---|---|---|---|\n", res.Decision.Confidence*100)
	for _, m := range res.Metrics {
		name := m.Metric
		if m.Decides {
			name += " (decides)"
		}
		fmt.Fprintf(b, "| %s | %s [%s, %s] | %s [%s, %s] | [%s, %s] | %s (%s) |\n", name,
			num(m.Baseline.Median), num(m.Baseline.Q1), num(m.Baseline.Q3),
			num(m.Mutated.Median), num(m.Mutated.Q1), num(m.Mutated.Q3),
			num(m.Bootstrap.Lo), num(m.Bootstrap.Hi), num(m.MannWhitney.U), num(m.MannWhitney.P))
	}
	b.WriteString("\nTool calls: not recorded (no agent reports them in its response).\n\n")
	if len(res.PhaseRounds) > 0 {
		b.WriteString("### Gate rounds per phase (median)\n\n| Phase | Baseline | Mutated |\n|---|---|---|\n")
		for _, p := range res.PhaseRounds {
			fmt.Fprintf(b, "| %s | %s | %s |\n", orDash(p.Phase), num(p.Baseline), num(p.Mutated))
		}
		b.WriteString("\n")
	}
}

func writePerDispatch(b *strings.Builder, res *Result) {
	b.WriteString("## Per dispatch (medians over the replicas that re-ran it)\n\n")
	b.WriteString("| Dispatch (replay of) | Role | Runs (baseline / mutated) | Duration s | Input chars |\n|---|---|---|---|---|\n")
	for _, d := range res.Dispatches {
		side := func(runs int, x float64) string {
			if runs == 0 {
				return "did not run"
			}
			return num(x)
		}
		fmt.Fprintf(b, "| %d | %s | %d / %d | %s / %s | %s / %s |\n", d.ReplayOf, d.Role, d.BaselineRuns, d.MutatedRuns,
			side(d.BaselineRuns, d.BaselineDuration), side(d.MutatedRuns, d.MutatedDuration), side(d.BaselineRuns, d.BaselineInput), side(d.MutatedRuns, d.MutatedInput))
	}
	b.WriteString("\nOutput chars per dispatch are in the JSON result.\n\n")
}

func writeNoise(b *strings.Builder, res *Result) {
	nz := res.Noise
	b.WriteString("## Noise floor and effect\n\n")
	fmt.Fprintf(b, "Determinism of the outcome (share of replicas equal to the arm's most common one): baseline %.2f, mutated %.2f. ", nz.BaselineOutcome, nz.MutatedOutcome)
	fmt.Fprintf(b, "The baseline column is run-to-run noise (baseline against baseline). A dispatch is marked as an effect when Fisher's exact test of the share of runs ending in the baseline's usual outcome, adjusted by Holm's method over the %d dispatches, is below alpha %g (exploratory: it does not decide).\n\n", len(nz.Dispatches), res.Rule.Alpha)
	b.WriteString("| Dispatch (replay of) | Role | Baseline determinism | Baseline usual outcome | Mutated determinism | Mutated usual outcome | Holm p | Effect |\n|---|---|---|---|---|---|---|---|\n")
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
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", d.ReplayOf, d.Role, score(d.BaselineRuns, d.Baseline), orDash(d.BaselineMode), score(d.MutatedRuns, d.Mutated), orDash(d.MutatedMode), num(d.HolmP), effect)
	}
	b.WriteString("\n")
}

func writeReplicas(b *strings.Builder, res *Result) {
	b.WriteString("## Replicas\n\n| Arm | # | Session | Outcome | Verdict | Gate rounds | Findings | Duration s | Input chars | Output chars | Artifact diff |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
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
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %d | %d | %s | %d | %d | %s |\n", r.Arm, r.Index, r.Session, outcome, r.Verdict,
			r.GateRounds, r.Findings, num(r.DurationS), r.InputChars, r.OutputChars, art)
	}
	b.WriteString("\nEach replica's worktree and branch are kept under replay-worktrees/ in the scratch dir.\n")
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
