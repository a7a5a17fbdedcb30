package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/stats"
)

// Result files in the output directory.
const (
	JSONFile     = "corpus-result.json"
	MarkdownFile = "corpus-result.md"
)

// write saves res in dir as JSON and markdown (each replaced atomically).
func write(dir string, res *Result) error {
	var md strings.Builder
	if err := WriteMarkdown(&md, res); err != nil {
		return err
	}
	doc, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := safewrite.WriteAtomicIn(dir, JSONFile, append(doc, '\n')); err != nil {
		return err
	}
	if err := safewrite.WriteAtomicIn(dir, MarkdownFile, []byte(md.String())); err != nil {
		return err
	}
	res.Files = &Files{JSON: filepath.Join(dir, JSONFile), Markdown: filepath.Join(dir, MarkdownFile), Log: filepath.Join(dir, LogFile)}
	return nil
}

// WriteMarkdown writes res as a markdown report, the pipelines' text escaped: the
// file's form (WriteReport with markdown tables).
func WriteMarkdown(w io.Writer, res *Result) error {
	return WriteReport(w, res, report.TableStyle{})
}

// WriteReport writes res as the markdown report with its tables drawn in style
// (the screen's form on a terminal), the pipelines' text escaped.
func WriteReport(w io.Writer, res *Result, style report.TableStyle) error {
	var b strings.Builder
	s, a := res.Settings, res.Aggregate
	fmt.Fprintf(&b, "# Corpus A/B replay over %d pipelines\n\n", a.Pipelines)
	fmt.Fprintf(&b, "**Generated:** %s\n", res.Generated.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "**Mutations:** %s (content %s)\n", strings.Join(s.Mutations, "; "), short(s.MutationHash))
	switch {
	case res.ReplicasPerArm > 0 && res.Continued > 0:
		fmt.Fprintf(&b, "**Replicas:** %d per arm per pipeline (the experiment continued from %d with --more); agent %s", res.ReplicasPerArm, res.Continued, s.Agent)
	case res.ReplicasPerArm > 0:
		fmt.Fprintf(&b, "**Replicas:** %d per arm per pipeline (the experiment extended with --more); agent %s", res.ReplicasPerArm, s.Agent)
	default:
		fmt.Fprintf(&b, "**Replicas:** %d per arm per pipeline; agent %s", s.Replicas, s.Agent)
	}
	if s.Check != "" {
		fmt.Fprintf(&b, "; check `%s`", s.Check)
	}
	fmt.Fprintf(&b, "; metric %s\n", s.Metric)
	fmt.Fprintf(&b, "\n## Decision: %s\n\nStep %d of the corpus rule: %s.\n\n%s\n", strings.ToUpper(a.Verdict), a.Step, a.Reason, res.CorpusRule)
	b.WriteString("## Aggregate\n\n")
	rates := [][]string{rateRow("baseline (pooled)", a.BaselinePass), rateRow("mutated (pooled)", a.MutatedPass)}
	if err := style.Write(&b, []string{"Arm", "Passed", "Rate", strconv.FormatFloat(100*(1-res.Rule.Alpha), 'g', 4, 64) + "% confidence sequence"}, rates); err != nil {
		return err
	}
	if a.Decision != nil {
		b.WriteString("\n### Statistics of the whole-corpus decision\n\n")
		for _, line := range replicate.StatisticsLines(*a.Decision) {
			fmt.Fprintf(&b, "- %s\n", line)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Median change of the deciding metric over the pipelines: %+.1f%%\n", a.MedianChange*100)
	b.WriteString("Decisions:")
	for _, v := range []string{stats.Adopt, stats.Reject, stats.Undecided, "error"} {
		fmt.Fprintf(&b, " %s %d", v, a.Decisions[v])
	}
	b.WriteString("\n\n## Pipelines\n\n")
	rows := make([][]string, 0, len(res.Rows))
	for i, r := range res.Rows {
		pass := func(rs stats.RateStats) string { return fmt.Sprintf("%d/%d", rs.Passed, rs.N) }
		bp, mp, med, note := "-", "-", "-", r.Report
		if r.Decision != nil {
			bp, mp = pass(r.Decision.BaselinePass), pass(r.Decision.MutatedPass)
			med = num(r.BaselineMedian) + " / " + num(r.MutatedMedian)
		} else {
			note = r.Error
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), r.Pipeline, r.Verdict(), bp, mp, med, orDash(note)})
	}
	if err := style.Write(&b, []string{"#", "Pipeline", "Decision", "Baseline pass", "Mutated pass", "Median " + s.Metric + " (baseline / mutated)", "Report or error"}, rows); err != nil {
		return err
	}
	b.WriteString("\nEach pipeline's full replicated report is beside its manifest; the per-pipeline rule:\n\n" + res.RuleText)
	_, err := io.WriteString(w, report.SafeText(b.String()))
	return err
}

// rateRow is an arm's row of the aggregate table.
func rateRow(arm string, rs stats.RateStats) []string {
	if rs.N == 0 {
		return []string{arm, "0/0", "-", "no replica"}
	}
	return []string{arm, fmt.Sprintf("%d/%d", rs.Passed, rs.N), fmt.Sprintf("%.2f", rs.Rate), fmt.Sprintf("[%.3f, %.3f]", rs.Interval.Lo, rs.Interval.Hi)}
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

// resultKind bounds the size of a corpus result read by the gate.
var resultKind = runfile.Kind{What: "corpus result", Max: 64 << 20}

// IsResult reports whether data is a corpus result document (its format field).
func IsResult(data []byte) bool {
	var head struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(bytes.TrimSpace(data), &head) == nil && strings.HasPrefix(head.Format, "replay-corpus/")
}

// ReadResult reads a corpus result file (what --json prints, corpus-result.json).
func ReadResult(path string) (*Result, error) {
	data, err := runfile.ReadFile(path, resultKind)
	if err != nil {
		return nil, errkind.Errorf(replicate.ErrNoResult, "%s: %w; run replay corpus first, or give --result FILE", path, err)
	}
	return decodeResult(path, data)
}

// decodeResult parses a corpus result document read from path.
func decodeResult(path string, data []byte) (*Result, error) {
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, errkind.Errorf(replicate.ErrNoResult, "%s: not a corpus result (%v); give the corpus-result.json of replay corpus", path, err)
	}
	if res.Format != Format {
		return nil, errkind.Errorf(replicate.ErrNoResult, "%s: format %q, this replay reads %s; rerun replay corpus with this version", path, res.Format, Format)
	}
	if res.Aggregate.Verdict == "" {
		return nil, errkind.Errorf(replicate.ErrNoResult, "%s: the corpus result holds no decision; rerun replay corpus", path)
	}
	return &res, nil
}

// Check applies the gate g to the aggregate row of res: the overall decision
// against FailOn, and with MaxRegression the pooled pass-rate drop and the median
// change of the deciding metric over the pipelines.
func Check(g replicate.Gate, res *Result) replicate.GateReport {
	a := res.Aggregate
	rep := replicate.GateReport{Verdict: a.Verdict, Metric: res.Settings.Metric, Failures: []string{},
		PassRateDrop: a.BaselinePass.Rate - a.MutatedPass.Rate, MetricIncrease: a.MedianChange}
	rep.Explain(a.Decision, res.RuleText)
	rep.Step = a.Step
	switch {
	case slices.Contains(g.FailOn, a.Verdict):
		rep.Failures = append(rep.Failures, fmt.Sprintf("the corpus decision is %s (step %d: %s)", a.Verdict, a.Step, a.Reason))
	case stats.IsUndecided(a.Verdict) && !g.AllowUndecided:
		rep.Failures = append(rep.Failures, fmt.Sprintf("the corpus is undecided (%s); pass --allow-undecided to let an undecided corpus through", a.Reason))
	}
	if g.MaxRegression >= 0 {
		if rep.PassRateDrop > g.MaxRegression {
			rep.Failures = append(rep.Failures, fmt.Sprintf("the pooled pass rate drops by %.3f (%d/%d -> %d/%d), more than %.3g", rep.PassRateDrop, a.BaselinePass.Passed, a.BaselinePass.N, a.MutatedPass.Passed, a.MutatedPass.N, g.MaxRegression))
		}
		if rep.MetricIncrease > g.MaxRegression {
			rep.Failures = append(rep.Failures, fmt.Sprintf("the median %s rises by %.1f%% over the pipelines, more than %.3g%%", res.Settings.Metric, rep.MetricIncrease*100, g.MaxRegression*100))
		}
	}
	return rep
}

// IsResultFile reports whether the file at path holds a corpus result (by its
// format field); false when it cannot be read.
func IsResultFile(path string) bool {
	data, err := runfile.ReadFile(path, resultKind)
	return err == nil && IsResult(data)
}
