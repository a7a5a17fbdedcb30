package replicate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/stats"
)

// ErrGateFailed is the kind of the error for a result the gate does not let pass.
var ErrGateFailed = errors.New("the A/B gate failed")

// ErrNoResult is the kind of the error for a missing or unreadable result.
var ErrNoResult = errors.New("no replicated A/B result")

// resultFile bounds the size of a result file or log read by the gate.
var resultFile = runfile.Kind{What: "replicated A/B result", Max: 256 << 20}

// Gate is what a finished result must satisfy to pass.
type Gate struct {
	// FailOn lists the verdicts that fail the gate (reject, undecided, adopt;
	// skip and expand are an older result's undecided).
	FailOn []string
	// AllowUndecided lets an undecided result pass (unless FailOn names it);
	// without it an undecided experiment fails the gate: nothing was shown.
	AllowUndecided bool
	// MaxRegression, when not negative, is the largest allowed regression: the
	// mutated pass rate may be at most this far below the baseline's, and the
	// deciding metric's mutated median at most this fraction above the baseline's.
	MaxRegression float64
}

// Verdicts is the gate's whole vocabulary, in the words a result file holds:
// adopt, reject, undecided, and an older result's skip and expand, lowercase
// and exact. Any other value, a case variant included, is not a verdict the
// gate knows.
func Verdicts() []string {
	return []string{stats.Adopt, stats.Reject, stats.Undecided, stats.Skip, stats.Expand}
}

// CheckDecision refuses a decision read from the file where (a path, or path:line)
// that the gate cannot trust: a verdict outside Verdicts, or pass counts that no
// replay writes (more passes than replicas, a negative count, a rate outside 0..1
// or other than passed/n). The error is of kind ErrNoResult (exit 2) and names the
// value.
func CheckDecision(where, verdict string, base, mutated stats.RateStats) error {
	if !slices.Contains(Verdicts(), verdict) {
		return errkind.Errorf(ErrNoResult, "%s: verdict %q is not one the gate knows (%s, exactly, lowercase); the result was edited or written by another tool: rerun the replay to get a result", where, verdict, strings.Join(Verdicts(), ", "))
	}
	for _, arm := range []struct {
		name string
		r    stats.RateStats
	}{{"baseline_pass", base}, {"mutated_pass", mutated}} {
		r := arm.r
		want := 0.0
		if r.N > 0 {
			want = float64(r.Passed) / float64(r.N)
		}
		if r.N < 0 || r.Passed < 0 || r.Passed > r.N || math.IsNaN(r.Rate) || math.Abs(r.Rate-want) > 1e-9 {
			return errkind.Errorf(ErrNoResult, "%s: %s is %d of %d at rate %g, which no replay writes; the result was edited or cut: rerun the replay to get a result", where, arm.name, r.Passed, r.N, r.Rate)
		}
	}
	return nil
}

// Validate checks the gate's own settings.
func (g Gate) Validate() error {
	verdicts := Verdicts()
	for _, v := range g.FailOn {
		if v != "" && !slices.Contains(verdicts, v) {
			return errkind.Errorf(ErrBadOptions, "--fail-on %s: unknown verdict; give some of %s, comma-separated", v, strings.Join(verdicts, ","))
		}
	}
	if math.IsNaN(g.MaxRegression) || math.IsInf(g.MaxRegression, 0) {
		return errkind.New(ErrBadOptions, "--max-regression: give a number, for example 0.1 for 10%")
	}
	return nil
}

// GateReport is the gate's verdict on one result.
type GateReport struct {
	Verdict string `json:"verdict"`
	// PassRateDrop is baseline minus mutated pass rate; MetricIncrease is the
	// deciding metric's mutated median over the baseline's, minus 1 (0 when the
	// baseline median is 0).
	PassRateDrop   float64  `json:"pass_rate_drop"`
	MetricIncrease float64  `json:"metric_increase"`
	Metric         string   `json:"metric"`
	Failures       []string `json:"failures"`
	// Step is the rule's step that decided, Rule its text; Statistics are the
	// decision's level, tests, p-values, intervals and smallest detectable
	// effects in words (StatisticsLines); Decision is all of it as numbers. Nil
	// when the result holds no tested decision.
	Step       int             `json:"step"`
	Rule       string          `json:"rule,omitempty"`
	Statistics []string        `json:"statistics,omitempty"`
	Decision   *stats.Decision `json:"decision,omitempty"`
}

// Explain adds decision d and its rule's step to r (ruleText: stats.Rule.Text).
func (r *GateReport) Explain(d *stats.Decision, ruleText string) {
	if d == nil {
		return
	}
	r.Step, r.Rule, r.Statistics, r.Decision = d.Step, RuleStep(ruleText, d.Step), StatisticsLines(*d), d
}

// Check applies g to res; the report lists every reason it fails, none when it passes.
func (g Gate) Check(res *Result) GateReport {
	d := res.Decision
	rep := GateReport{Verdict: d.Verdict, Metric: res.Metric, Failures: []string{},
		PassRateDrop: d.BaselinePass.Rate - d.MutatedPass.Rate}
	for _, m := range res.Metrics {
		// Over the passing replicas: 0 when an arm has none (no median to compare).
		if inc := m.Mutated.Median/m.Baseline.Median - 1; m.Decides && m.Baseline.Median != 0 && !math.IsNaN(inc) && !math.IsInf(inc, 0) {
			rep.MetricIncrease = inc
		}
	}
	rep.Explain(&d, res.RuleText)
	switch {
	case slices.Contains(g.FailOn, d.Verdict):
		rep.Failures = append(rep.Failures, fmt.Sprintf("the decision is %s (step %d: %s)", d.Verdict, d.Step, d.Reason))
	case stats.IsUndecided(d.Verdict) && !g.AllowUndecided:
		rep.Failures = append(rep.Failures, fmt.Sprintf("the experiment is undecided (%s); add replicas to it (the same command again, or --more N), or pass --allow-undecided to let an undecided experiment through", d.Reason))
	}
	if g.MaxRegression >= 0 {
		if rep.PassRateDrop > g.MaxRegression {
			rep.Failures = append(rep.Failures, fmt.Sprintf("the pass rate drops by %.3f (%d/%d -> %d/%d), more than %.3g", rep.PassRateDrop, d.BaselinePass.Passed, d.BaselinePass.N, d.MutatedPass.Passed, d.MutatedPass.N, g.MaxRegression))
		}
		if rep.MetricIncrease > g.MaxRegression {
			rep.Failures = append(rep.Failures, fmt.Sprintf("the median %s rises by %.1f%%, more than %.3g%%", res.Metric, rep.MetricIncrease*100, g.MaxRegression*100))
		}
	}
	return rep
}

// Err is nil for a passing report, else an ErrGateFailed error listing why.
func (r GateReport) Err() error {
	if len(r.Failures) == 0 {
		return nil
	}
	return errkind.Errorf(ErrGateFailed, "gate failed: %s", strings.Join(r.Failures, "; "))
}

// ReadResult reads a result: a JSON document (what --json prints) or a JSONL log
// of them (replay-ab-replicas.jsonl), whose last line is taken.
func ReadResult(path string) (*Result, error) {
	data, err := runfile.ReadFile(path, resultFile)
	if err != nil {
		return nil, errkind.Errorf(ErrNoResult, "%s: %w; run a replicated A/B replay (--replicas N) first, or give --result FILE", path, err)
	}
	trimmed := bytes.TrimSpace(data)
	line := 0
	if !json.Valid(trimmed) {
		lines := bytes.Split(trimmed, []byte("\n"))
		line = len(lines)
		trimmed = lines[len(lines)-1]
	}
	var failed Failure
	if json.Unmarshal(trimmed, &failed) == nil && failed.InfrastructureError != "" {
		return nil, errkind.Errorf(ErrGateFailed, "%s: the last replicated A/B replay made no decision: %s", path, failed.InfrastructureError)
	}
	var res Result
	if err := json.Unmarshal(trimmed, &res); err != nil || res.Decision.Verdict == "" {
		where := path
		if line > 0 {
			where = fmt.Sprintf("%s:%d", path, line)
		}
		why := "it holds no decision"
		if err != nil {
			why = err.Error()
		}
		return nil, errkind.Errorf(ErrNoResult, "%s: not a replicated A/B result (%s); give the --json output or %s of a replicated A/B replay", where, why, JSONLFile)
	}
	where := path
	if line > 0 {
		where = fmt.Sprintf("%s:%d", path, line)
	}
	if err := CheckDecision(where, res.Decision.Verdict, res.Decision.BaselinePass, res.Decision.MutatedPass); err != nil {
		return nil, err
	}
	return &res, nil
}
