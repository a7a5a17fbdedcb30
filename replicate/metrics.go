package replicate

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/stats"
)

// The metrics a decision can compare (--metric); lower is better for each.
const (
	MetricDuration    = "duration_s"
	MetricGateRounds  = "gate_rounds"
	MetricFindings    = "findings"
	MetricInputChars  = "input_chars"
	MetricOutputChars = "output_chars"
)

// MetricResolution is the resolution metric is recorded at: 0.1 s for
// durations (agents report them rounded to 0.1 s), 1 for counts. Values are
// rounded to it before they are compared, so values equal as printed tie.
func MetricResolution(metric string) float64 {
	if metric == MetricDuration {
		return 0.1
	}
	return 1
}

// MetricUnit is the unit metric is shown in.
func MetricUnit(metric string) string {
	switch metric {
	case MetricDuration:
		return "seconds"
	case MetricGateRounds:
		return "gate rounds"
	case MetricFindings:
		return "findings"
	}
	return "characters"
}

// MetricNames lists the metrics, in report order.
func MetricNames() []string {
	return []string{MetricDuration, MetricGateRounds, MetricFindings, MetricInputChars, MetricOutputChars}
}

// Replica is one replay of one arm and what it measured.
type Replica struct {
	Arm      string `json:"arm"`
	Index    int    `json:"index"`
	Session  string `json:"session"`
	Worktree string `json:"worktree"`
	// Passed is the replica's outcome: the check's exit status 0, else the
	// pipeline's acceptance verdict PASS with no stop.
	Passed bool `json:"passed"`
	// Verdict is the pipeline's acceptance verdict: PASS, FAIL or UNKNOWN.
	Verdict     string `json:"verdict"`
	CheckExit   *int   `json:"check_exit,omitempty"`
	CheckOutput string `json:"check_output,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
	// mutations are the A/B replay's "ORIG -> REPL" labels, as ab.Run parsed them.
	mutations []string
	// measured: the replica was compared with the original run (fill), in this
	// process or, for a replica of an earlier run (Request.Prior), when that run
	// recorded it. A finished replica's comparison never changes, so each is
	// compared once: comparing all of them at every look of --until-decided made
	// the looks quadratic (46% of a 40-replica run's CPU).
	measured   bool
	GateRounds int `json:"gate_rounds"`
	// GateRoundsByPhase counts gate rounds per phase id over the whole replayed run.
	GateRoundsByPhase map[string]int `json:"gate_rounds_by_phase"`
	// Findings counts the replica's dispatches that answered FAIL or BLOCKED.
	Findings    int     `json:"findings"`
	DurationS   float64 `json:"duration_s"`
	InputChars  int     `json:"input_chars"`
	OutputChars int     `json:"output_chars"`
	// ToolCalls is nil: no agent reports its tool calls in its response yet.
	ToolCalls *int                 `json:"tool_calls"`
	Artifact  *report.ArtifactDiff `json:"artifact_diff"`
	// Dispatches are the replica's re-dispatched dispatches in order.
	Dispatches []DispatchMetric `json:"dispatches"`
}

// DispatchMetric is one re-dispatched dispatch of a replica. It is named by the
// dispatch it replays (and its replica's session), never by its own seq: the
// replicas of --jobs J share one manifest and take seqs in whatever order they
// reach it, and the result must be the same at any --jobs. The manifest line is
// the one with this replay_of and the replica's replay_session.
type DispatchMetric struct {
	ReplayOf    int     `json:"replay_of"`
	Role        string  `json:"role"`
	Phase       string  `json:"phase,omitempty"`
	Status      string  `json:"status"`
	Verdict     string  `json:"verdict,omitempty"`
	Reason      string  `json:"reason,omitempty"`
	DurationS   float64 `json:"duration_s"`
	InputChars  int     `json:"input_chars"`
	OutputChars int     `json:"output_chars"`
	// Reused is never true: replicas run live (kept to show it).
	Reused bool `json:"reused"`
}

// Outcome is the dispatch's outcome as the noise floor compares it.
func (d DispatchMetric) Outcome() string {
	if d.Verdict == "" {
		return d.Status
	}
	return d.Status + "/" + d.Verdict
}

// maxBodyRead bounds how much of a dispatch file is read to count its characters.
var maxBodyRead = runfile.Template

// dispatchMetrics lists the dispatches of rep with their numbers; dir is the
// dispatch directory their files are in.
func dispatchMetrics(rep *redispatch.Report, dir string) []DispatchMetric {
	out := []DispatchMetric{}
	for _, oc := range rep.Outcomes {
		d := DispatchMetric{Role: oc.Original.Role, Phase: oc.Original.Phase,
			Status: string(oc.Response.Status), Verdict: oc.Response.Verdict, Reason: oc.Response.Reason,
			DurationS: oc.Response.DurationS, OutputChars: oc.Response.OutputChars, Reused: oc.Response.Reused}
		if oc.Original != nil {
			d.ReplayOf = oc.Original.Seq
		}
		if oc.File != "" {
			if data, err := runfile.ReadFile(filepath.Join(dir, filepath.Base(oc.File)), maxBodyRead); err == nil {
				if _, body, err := manifest.ParseDispatchHeader(data); err == nil {
					data = body // the prompt, without replay's audit header
				}
				d.InputChars = utf8.RuneCount(data)
			}
		}
		out = append(out, d)
	}
	return out
}

// stoppedText says which dispatch stopped rep and how, naming it by the dispatch
// it replays (as DispatchMetric does, for the same reason); "" when none did.
func stoppedText(rep *redispatch.Report) string {
	if rep.Stopped == "" {
		return ""
	}
	for _, oc := range rep.Outcomes {
		if oc.Response.Status != manifest.StatusCompleted && oc.Original != nil {
			return fmt.Sprintf("replay of %d (%s) ended %s: %s", oc.Original.Seq, oc.Original.Role, oc.Response.Status, oc.Response.Reason)
		}
	}
	return rep.Stopped
}

// fill sums a replica's dispatches and takes its run-level numbers from d, the
// comparison of its session with the original run.
func (rep *Replica) fill(d *report.ReplayDiff, hasCheck bool) {
	rep.Findings, rep.DurationS, rep.InputChars, rep.OutputChars = 0, 0, 0, 0
	for _, x := range rep.Dispatches {
		if x.Verdict == "FAIL" || x.Verdict == "BLOCKED" || x.Status == string(manifest.StatusFailed) || x.Status == string(manifest.StatusError) {
			rep.Findings++
		}
		rep.DurationS += x.DurationS
		rep.InputChars += x.InputChars
		rep.OutputChars += x.OutputChars
	}
	rep.Verdict = d.Outcome.Replayed
	rep.GateRounds = d.Metrics.ReplayedGateRounds
	rep.GateRoundsByPhase = map[string]int{}
	for _, p := range d.Phases {
		rep.GateRoundsByPhase[p.Phase] = p.ReplayedGateRounds
	}
	rep.Artifact = d.ArtifactDiff
	if hasCheck && rep.CheckExit != nil {
		rep.Passed = *rep.CheckExit == 0
	} else {
		rep.Passed = rep.Stopped == "" && rep.Verdict == "PASS"
	}
}

// Value returns rep's number for metric.
func Value(rep *Replica, metric string) float64 { return rep.value(metric) }

// value returns the replica's number for metric.
func (rep *Replica) value(metric string) float64 {
	switch metric {
	case MetricGateRounds:
		return float64(rep.GateRounds)
	case MetricFindings:
		return float64(rep.Findings)
	case MetricInputChars:
		return float64(rep.InputChars)
	case MetricOutputChars:
		return float64(rep.OutputChars)
	}
	return rep.DurationS
}

// MetricCompare is one metric compared between the arms.
type MetricCompare struct {
	Metric  string `json:"metric"`
	Decides bool   `json:"decides"`
	Unit    string `json:"unit"`
	// Baseline and Mutated summarize the passing replicas only.
	Baseline stats.Summary `json:"baseline"`
	Mutated  stats.Summary `json:"mutated"`
	// BothPassed counts the replica pairs where both passed; Shift is the
	// confidence sequence (at 1 - alpha) of the median of their differences,
	// mutated minus baseline, rounded to the metric's resolution: null bounds
	// when no pair had both pass, an infinite side when too few bound it.
	BothPassed int            `json:"both_passed"`
	MedianDiff stats.Maybe    `json:"median_diff"`
	Shift      stats.Interval `json:"shift"`
}

// PhaseRounds are the median gate rounds of one phase in each arm.
type PhaseRounds struct {
	Phase    string  `json:"phase"`
	Baseline float64 `json:"baseline_median"`
	Mutated  float64 `json:"mutated_median"`
}

// measure compares every replica's session with the original run and decides.
func measure(r Request, res *Result, reps []*Replica) error {
	pl, err := r.AB.Reload()
	if err != nil {
		return err
	}
	res.Session = pl.Location.SessionID
	for _, rep := range reps {
		if rep.Arm == Mutated && res.Mutations == nil {
			// From the request, not from the replicas' entries: a replica stopped
			// before its first mutated dispatch records no mutation.
			res.Mutations = rep.mutations
		}
	}
	for _, rep := range reps {
		if rep.measured {
			continue
		}
		labels := res.Mutations
		if rep.Arm == Baseline {
			labels = nil
		}
		d, err := ab.CompareSession(pl, rep.Session, labels)
		if err != nil {
			return fmt.Errorf("%s replica %d (session %s): %w", rep.Arm, rep.Index, rep.Session, err)
		}
		rep.fill(d, r.Check != "")
		rep.measured = true
	}
	res.Replicas = reps
	base, mut := arms(reps, r.Metric)
	res.Decision = r.Rule.Decide(base, mut)
	res.Metrics = compareMetrics(r, reps)
	res.PhaseRounds = phaseRounds(reps)
	res.Noise = noiseOf(reps, r.Rule.Alpha)
	res.Dispatches = perDispatch(reps)
	return nil
}

// arms splits reps into the rule's two arms, measured by metric.
func arms(reps []*Replica, metric string) (stats.Arm, stats.Arm) {
	var base, mut stats.Arm
	for _, rep := range reps {
		a := &base
		if rep.Arm == Mutated {
			a = &mut
		}
		a.Passed = append(a.Passed, rep.Passed)
		a.Metric = append(a.Metric, rep.value(metric))
	}
	return base, mut
}

// compareMetrics describes every metric over the passing replicas of each arm
// (a failed replica is its own outcome, never a value) and over the pairs where
// both passed; only the composite test of the decision decides, so these are
// descriptive.
func compareMetrics(r Request, reps []*Replica) []MetricCompare {
	var out []MetricCompare
	for _, m := range MetricNames() {
		base, mut := arms(reps, m)
		res := MetricResolution(m)
		var diffs []float64
		for i := range min(len(base.Passed), len(mut.Passed)) {
			b, u := base.Metric[i], mut.Metric[i]
			if base.Passed[i] && mut.Passed[i] && !math.IsNaN(b) && !math.IsNaN(u) {
				diffs = append(diffs, stats.RoundTo(stats.RoundTo(u, res)-stats.RoundTo(b, res), res))
			}
		}
		out = append(out, MetricCompare{Metric: m, Decides: m == r.Metric, Unit: MetricUnit(m),
			Baseline: stats.Summarize(rounded(base.Successful(), res)), Mutated: stats.Summarize(rounded(mut.Successful(), res)),
			BothPassed: len(diffs), MedianDiff: stats.Maybe(stats.Summarize(diffs).Median), Shift: stats.MedianShiftCS(diffs, r.Rule.Alpha)})
	}
	return out
}

func rounded(xs []float64, res float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = stats.RoundTo(x, res)
	}
	return out
}

func phaseRounds(reps []*Replica) []PhaseRounds {
	var phases []string
	for _, rep := range reps {
		for p := range rep.GateRoundsByPhase {
			if !slices.Contains(phases, p) {
				phases = append(phases, p)
			}
		}
	}
	slices.Sort(phases)
	var out []PhaseRounds
	for _, p := range phases {
		var b, m []float64
		for _, rep := range reps {
			v := float64(rep.GateRoundsByPhase[p])
			if rep.Arm == Baseline {
				b = append(b, v)
			} else {
				m = append(m, v)
			}
		}
		out = append(out, PhaseRounds{Phase: p, Baseline: stats.Summarize(b).Median, Mutated: stats.Summarize(m).Median})
	}
	return out
}
