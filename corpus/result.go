package corpus

import (
	"math"
	"strconv"
	"time"

	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/stats"
)

// Format names the version of the corpus result and log layout.
const Format = "replay-corpus/1"

// Row is one pipeline's replicated A/B replay, or the error that stopped it.
type Row struct {
	Pipeline string `json:"pipeline"`
	Key      string `json:"key"`
	Session  string `json:"original_session,omitempty"`
	// Decision is the per-pipeline decision (nil for an error row).
	Decision *stats.Decision `json:"decision,omitempty"`
	Replicas int             `json:"replicas_per_arm,omitempty"`
	// Metric and its medians per arm (NaN-free: 0 when not measured).
	Metric         string  `json:"metric,omitempty"`
	BaselineMedian float64 `json:"baseline_median"`
	MutatedMedian  float64 `json:"mutated_median"`
	Report         string  `json:"report,omitempty"`
	Error          string  `json:"error,omitempty"`
	// Baseline and Mutated are the replicas' outcomes and deciding-metric values,
	// the corpus test's strata (nil in rows of logs written before they were kept).
	Baseline *stats.Arm `json:"baseline_replicas,omitempty"`
	Mutated  *stats.Arm `json:"mutated_replicas,omitempty"`
}

// Verdict is the row's decision, "error" for an error row.
func (r Row) Verdict() string {
	if r.Decision == nil {
		return "error"
	}
	return r.Decision.Verdict
}

func rowOf(dir, key, md string, res *replicate.Result) Row {
	d := res.Decision
	row := Row{Pipeline: dir, Key: key, Session: res.Session, Decision: &d, Replicas: len(res.Replicas) / 2, Metric: res.Metric, Report: md,
		Baseline: &stats.Arm{}, Mutated: &stats.Arm{}}
	for _, rep := range res.Replicas {
		a := row.Baseline
		if rep.Arm == replicate.Mutated {
			a = row.Mutated
		}
		a.Passed = append(a.Passed, rep.Passed)
		a.Metric = append(a.Metric, finite(replicate.Value(rep, res.Metric)))
	}
	for _, m := range res.Metrics {
		if m.Decides {
			row.BaselineMedian, row.MutatedMedian = finite(m.Baseline.Median), finite(m.Mutated.Median)
		}
	}
	return row
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Aggregate is the corpus pooled over its pipelines.
type Aggregate struct {
	Pipelines    int             `json:"pipelines"`
	BaselinePass stats.RateStats `json:"baseline_pass"`
	MutatedPass  stats.RateStats `json:"mutated_pass"`
	// Decision is the whole-corpus decision: stratified tests, pipelines as strata.
	Decision *stats.Decision `json:"decision,omitempty"`
	// Decisions counts the rows per verdict (adopt, reject, skip, expand, error).
	Decisions map[string]int `json:"decisions"`
	// MedianChange is the median over the decided pipelines of the deciding
	// metric's mutated median over its baseline median, minus 1 (pipelines with a
	// baseline median of 0 left out).
	MedianChange float64 `json:"median_metric_change"`
	Verdict      string  `json:"verdict"`
	Step         int     `json:"step"`
	Reason       string  `json:"reason"`
}

// Result is a finished corpus run: its settings, the rule, the aggregate row and
// one row per pipeline in the corpus order.
type Result struct {
	Format    string     `json:"format"`
	Generated time.Time  `json:"generated_at"`
	Settings  Settings   `json:"settings"`
	Rule      stats.Rule `json:"rule"`
	RuleText  string     `json:"rule_text"`
	// CorpusRule is the rule of the overall decision, in words.
	CorpusRule string    `json:"corpus_rule"`
	Aggregate  Aggregate `json:"aggregate"`
	// ReplicasPerArm is how many replicas per arm each pipeline has when --more
	// extended the experiment (0: the settings' design); Continued how many the
	// least advanced pipeline had before this run extended it (0: not extended
	// by this run).
	ReplicasPerArm int    `json:"replicas_per_arm,omitempty"`
	Continued      int    `json:"continued,omitempty"`
	Rows           []Row  `json:"pipelines"`
	Files          *Files `json:"-"`
}

// Files are where the result was written.
type Files struct {
	JSON, Markdown, Log string
}

// RuleText is the corpus decision rule in words.
const RuleText = `The whole-corpus decision tests the corpus at once, pipelines as strata: replica i of each arm is paired within its pipeline, and the pairs of every pipeline feed the per-run rule's three e-processes (below): with no difference, each untied pair is won by either arm with chance 1/2 within its own pipeline, however the pipelines differ in pass rate or speed, so the stratification is exact without a test per pipeline. Every pipeline runs the same number of replicas per arm (with --until-decided, --max-replicas); --more N adds N per arm to every pipeline, continuing each one's replicas, and decides over all of them: the e-processes stay valid however often the experiment is extended and looked at. A pipeline that failed to run leaves the corpus undecided. The per-pipeline decisions are exploratory: each is tested at alpha on its own, so with many pipelines some will decide by chance; they do not decide the corpus.
`

// build sums rows up under the request's settings.
func build(r Request, rows []Row) *Result {
	rule := stats.DefaultRule()
	rule.Margin = r.Settings.Margin
	rule.Alpha = r.Settings.alpha()
	res := &Result{Format: Format, Generated: r.Now, Settings: r.Settings, Rule: rule, RuleText: rule.Text(), CorpusRule: RuleText, Rows: rows}
	res.Aggregate = aggregate(rows, rule)
	return res
}

func aggregate(rows []Row, rule stats.Rule) Aggregate {
	a := Aggregate{Pipelines: len(rows), Decisions: map[string]int{}}
	var bp, bn, mp, mn int
	var changes []float64
	var base, mut []stats.Arm
	missing := 0
	for _, r := range rows {
		a.Decisions[r.Verdict()]++
		if r.Decision == nil {
			continue
		}
		bp, bn = bp+r.Decision.BaselinePass.Passed, bn+r.Decision.BaselinePass.N
		mp, mn = mp+r.Decision.MutatedPass.Passed, mn+r.Decision.MutatedPass.N
		if r.BaselineMedian != 0 {
			changes = append(changes, r.MutatedMedian/r.BaselineMedian-1)
		}
		if r.Baseline == nil || r.Mutated == nil {
			missing++
			continue
		}
		base, mut = append(base, *r.Baseline), append(mut, *r.Mutated)
	}
	conf := 1 - rule.Alpha
	a.BaselinePass, a.MutatedPass = rateStats(bp, bn, conf), rateStats(mp, mn, conf)
	if len(changes) > 0 {
		a.MedianChange = stats.Summarize(changes).Median
	}
	switch {
	case a.Decisions["error"] > 0:
		a.Verdict, a.Step, a.Reason = stats.Undecided, 0, plural(a.Decisions["error"], "pipeline", "pipelines")+" failed to run: the corpus is incomplete"
	case missing > 0:
		a.Verdict, a.Step, a.Reason = stats.Undecided, 0, plural(missing, "pipeline row keeps", "pipeline rows keep")+" no replicas (a log of an older replay): run them again"
	case len(base) == 0:
		a.Verdict, a.Step, a.Reason = stats.Undecided, 0, "no pipeline finished"
	default:
		d := rule.DecideStratified(base, mut)
		a.Decision = &d
		a.Verdict, a.Step, a.Reason = d.Verdict, d.Step, d.Reason
		a.BaselinePass, a.MutatedPass = d.BaselinePass, d.MutatedPass
	}
	return a
}

func rateStats(k, n int, conf float64) stats.RateStats {
	rs := stats.RateStats{Passed: k, N: n, Interval: stats.RateCS(k, n-k, 1-conf)}
	if n > 0 {
		rs.Rate = float64(k) / float64(n)
	}
	return rs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
