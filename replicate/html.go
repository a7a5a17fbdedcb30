package replicate

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/replaytool/replay/stats"
)

//go:embed html.tmpl
var htmlTemplate string

// page is the parsed HTML report template, parsed on first use, not at start-up.
var page = sync.OnceValue(func() *template.Template {
	funcs := template.FuncMap{"mul100": func(x float64) float64 { return x * 100 }}
	return template.Must(template.New("report").Funcs(funcs).Parse(htmlTemplate))
})

// Chart geometry (SVG user units).
const (
	chartW     = 640.0
	chartLeft  = 80.0
	chartRight = 24.0
	rowH       = 44.0
	axisH      = 26.0
)

// htmlView is what the template renders: the result with its charts laid out.
type htmlView struct {
	Res       *Result
	Generated string
	PerArm    int
	Verdict   string
	// Headline is the decision in one plain sentence; Luck the "could be
	// luck" line of an undecided experiment ("" otherwise).
	Headline, Luck string
	Effects        effectChart
	Stats          []string
	RuleSteps      []ruleStep
	RuleNotes      []string
	Conf           string
	Rates          []rateRow
	Charts         []metricChart
	Heatmap        []heatRow
	Divergence     divergence
}

// rateRow is one arm's pass rate with its confidence sequence in words.
type rateRow struct {
	Arm, Passed, Rate, Interval string
}

// effectChart shows each endpoint's difference with its confidence sequence.
type effectChart struct {
	W, H float64
	Rows []effectRow
}

// effectRow is one endpoint: a point, its interval (clipped to the axis, an
// arrow where unbounded), the no-difference line, and rounded ticks.
type effectRow struct {
	Title, Better, Words  string
	Y, Mid                float64
	Zero, Point, Lo, Hi   float64
	HasPoint, HasInterval bool
	// Open: a side runs past the axis (unbounded yet): the bar is dashed.
	Open                        bool
	AxisL, AxisR, TickY, LabelY float64
	Ticks                       []tick
}

type ruleStep struct {
	N        int
	Text     string
	Decisive bool
}

// metricChart is one metric's box-and-strip plot of both arms.
type metricChart struct {
	Metric, Title  string
	Decides        bool
	W, H           float64
	Rows           []boxRow
	Ticks          []tick
	AxisY, AxisEnd float64
}

type boxRow struct {
	Arm                       string
	Y, Mid, Top, Bottom       float64
	Q1, Q3, Med, Lo, Hi, BoxW float64
	Dots                      []dot
	Summary                   string
	Empty                     bool
}

type dot struct {
	X, Y  float64
	Class string
	Title string
}

type tick struct {
	X, Y  float64
	Label string
}

// heatRow is one dispatch of the divergence heatmap.
type heatRow struct {
	ReplayOf int
	Role     string
	Cells    [2]heatCell
	Effect   bool
	HolmP    string
}

type heatCell struct {
	Arm, Mode, Score, Fill string
}

// divergence is the first dispatch where the arms part, and the first where an
// arm disagrees with itself.
type divergence struct {
	Effect, Noise *DispatchNoise
}

// WriteHTML writes res as one self-contained HTML page: inline CSS and SVG, no
// script and nothing fetched. Every text from the run is escaped, and the same
// result gives the same bytes.
func WriteHTML(w io.Writer, res *Result) error {
	d := res.Decision
	v := htmlView{Res: res, PerArm: len(res.Replicas) / 2, Verdict: strings.ToUpper(d.Verdict),
		Generated: res.Generated.UTC().Format("2006-01-02 15:04:05 UTC"), Conf: confText(d.Alpha)}
	v.Headline, v.Luck = headline(d)
	v.Stats = StatisticsLines(d)
	for line := range strings.SplitSeq(strings.TrimSpace(res.RuleText), "\n") {
		num, text, ok := strings.Cut(line, ". ")
		n, err := strconv.Atoi(num)
		switch {
		case ok && err == nil:
			v.RuleSteps = append(v.RuleSteps, ruleStep{N: n, Text: text, Decisive: n == d.Step})
		case strings.TrimSpace(line) != "":
			v.RuleNotes = append(v.RuleNotes, line) // the rule's note on its level: not a step
		}
	}
	for _, arm := range []struct {
		name string
		r    stats.RateStats
	}{{Baseline, d.BaselinePass}, {Mutated, d.MutatedPass}} {
		row := rateRow{Arm: arm.name, Passed: fmt.Sprintf("%d/%d", arm.r.Passed, arm.r.N), Rate: "-", Interval: "no replica"}
		if arm.r.N > 0 {
			row.Rate = fmt.Sprintf("%.0f%%", 100*arm.r.Rate)
			row.Interval = fmt.Sprintf("%.0f%% to %.0f%%", 100*arm.r.Interval.Lo, 100*arm.r.Interval.Hi)
		}
		v.Rates = append(v.Rates, row)
	}
	v.Effects = effectsOf(res)
	for _, m := range res.Metrics {
		v.Charts = append(v.Charts, chartOf(res, m))
	}
	v.Heatmap = heatmapOf(res.Noise)
	v.Divergence = firstDivergence(res.Noise)
	if err := page().Execute(w, v); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	return nil
}

// headline is the decision in plain words, without p-values or e-values, and
// for an undecided experiment what more replicas would do.
func headline(d stats.Decision) (string, string) {
	c := d.Composite
	switch d.Verdict {
	case stats.Adopt:
		return fmt.Sprintf("The change is better: its replicas beat the baseline's in %d of %d replica pairs that differed (a failure counts as worse than any pass), too often to be luck.", c.MutatedWins, c.MutatedWins+c.BaselineWins), ""
	case stats.Reject:
		if d.Step == 1 {
			return fmt.Sprintf("The change is worse: it passes less often (%d/%d against %d/%d), too often to be luck.", d.MutatedPass.Passed, d.MutatedPass.N, d.BaselinePass.Passed, d.BaselinePass.N), ""
		}
		return fmt.Sprintf("The change is worse: the baseline's replicas beat its replicas in %d of %d replica pairs that differed (a failure counts as worse than any pass), too often to be luck.", c.BaselineWins, c.MutatedWins+c.BaselineWins), ""
	}
	h := fmt.Sprintf("Not decided yet: after %d replicas per arm, the difference between the arms could still be luck.", d.Pairs)
	if d.More == nil {
		return h, ""
	}
	if d.More.Replicas > 0 {
		return h, fmt.Sprintf("Could be luck: about %d more replicas per arm would tell, if the difference seen so far is real. Add them with --more %d (or run the same command again); the decision stays valid however often you add.", d.More.Replicas, d.More.Replicas)
	}
	return h, strings.ToUpper(d.More.Text[:1]) + d.More.Text[1:] + "."
}

// Effect chart geometry.
const (
	effW      = 640.0
	effLeft   = 24.0
	effRight  = 24.0
	effRowH   = 74.0
	effBarTop = 30.0
)

// effectsOf lays out each endpoint's difference with its confidence sequence.
func effectsOf(res *Result) effectChart {
	d := res.Decision
	c := effectChart{W: effW}
	add := func(title, better, words string, point, lo, hi, axLo, axHi, zero float64, format func(float64) string, step float64) {
		y := float64(len(c.Rows)) * effRowH
		r := effectRow{Title: title, Better: better, Words: words, Y: y, Mid: y + effBarTop + 8, AxisL: effLeft, AxisR: effW - effRight,
			TickY: y + effBarTop + 22, LabelY: y + effBarTop + 36}
		scale := func(x float64) float64 {
			x = math.Min(math.Max(x, axLo), axHi)
			return round1(effLeft + (x-axLo)/(axHi-axLo)*(effW-effLeft-effRight))
		}
		r.Zero = scale(zero)
		if !math.IsNaN(point) {
			r.HasPoint, r.Point = true, scale(point)
		}
		if !math.IsNaN(lo) && !math.IsNaN(hi) {
			r.HasInterval = true
			r.Open = lo < axLo || hi > axHi
			r.Lo, r.Hi = scale(lo), scale(hi)
		}
		for _, x := range tickValues(axLo, axHi, step) {
			r.Ticks = append(r.Ticks, tick{X: scale(x), Y: r.LabelY, Label: format(x)})
		}
		c.Rows = append(c.Rows, r)
	}
	pct := func(x float64) string {
		if math.Round(100*x) == 0 {
			return "0"
		}
		return fmt.Sprintf("%+.0f", 100*x)
	}
	conf := confText(d.Alpha)
	p := d.Pass
	passWords := fmt.Sprintf("Pass rate of the change minus the baseline's, in percentage points: %s, and with %s confidence between %s and %s.", pct(float64(p.Diff)), conf, pct(p.Interval.Lo), pct(p.Interval.Hi))
	if math.IsNaN(p.Interval.Lo) {
		passWords = "Pass rate: no replica pair yet."
	}
	add("Pass rate difference (percentage points)", "right is better", passWords, float64(p.Diff), p.Interval.Lo, p.Interval.Hi, -1, 1, 0, pct, 0.25)
	cm := d.Composite
	share := func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
	winWords := "Pairs won by the change: no pair differed yet."
	if !math.IsNaN(float64(cm.WinShare)) {
		winWords = fmt.Sprintf("Of the replica pairs that differed (a failure is worse than any pass, then the faster or smaller %s wins), the change won %s, and with %s confidence between %s and %s; 50%% is no difference.", res.Metric, share(float64(cm.WinShare)), conf, share(cm.Interval.Lo), share(cm.Interval.Hi))
	}
	add("Pairs won by the change (the deciding outcome)", "right is better", winWords, float64(cm.WinShare), cm.Interval.Lo, cm.Interval.Hi, 0, 1, 0.5, share, 0.25)
	for _, m := range res.Metrics {
		if !m.Decides {
			continue
		}
		unit := MetricUnit(m.Metric)
		words := fmt.Sprintf("%s of the change minus the baseline's, in %s, over the %d pairs where both passed: no pair yet.", m.Metric, unit, m.BothPassed)
		lo, hi, point := m.Shift.Lo, m.Shift.Hi, float64(m.MedianDiff)
		span := 0.0
		for _, x := range []float64{lo, hi, point, m.Baseline.Median * 0.2} {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				span = math.Max(span, math.Abs(x))
			}
		}
		if span == 0 {
			span = 1
		}
		step := niceStep(2 * span / 4)
		ax := math.Ceil(span/step) * step
		switch {
		case math.IsNaN(point):
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			words = fmt.Sprintf("Median %s of the change minus the baseline's, in %s, over the %d pairs where both passed: %s; too few pairs to bound it with %s confidence yet. Left is better. Descriptive: the pairs won decide.", m.Metric, unit, m.BothPassed, num(point), conf)
		default:
			words = fmt.Sprintf("Median %s of the change minus the baseline's, in %s, over the %d pairs where both passed: %s, and with %s confidence between %s and %s. Left is better. Descriptive: the pairs won decide.", m.Metric, unit, m.BothPassed, num(point), conf, boundText(lo), boundText(hi))
		}
		add(fmt.Sprintf("Median %s difference (%s)", m.Metric, unit), "left is better", words, point, lo, hi, -ax, ax, 0, tickFormat(step), step)
	}
	c.H = float64(len(c.Rows)) * effRowH
	return c
}

func boundText(x float64) string {
	if math.IsInf(x, 0) {
		return "an end too few pairs bound yet"
	}
	return num(x)
}

// tickValues are lo, lo+step, ... up to hi: at most 12 of them (a range too
// wide or too fine for float64 steps gets its two ends only).
func tickValues(lo, hi, step float64) []float64 {
	n := (hi - lo) / step
	if !(n >= 0 && n <= 12) || math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo+step == lo {
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return nil
		}
		return []float64{lo, hi}
	}
	var out []float64
	for i := 0; i <= int(math.Round(n)); i++ {
		out = append(out, lo+float64(i)*step)
	}
	return out
}

// niceStep is a round tick step near raw: 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// tickFormat prints ticks of step with as many decimals as the step needs.
func tickFormat(step float64) func(float64) string {
	dec := 0
	for s := step; dec < 6 && math.Abs(s-math.Round(s)) > 1e-9; s *= 10 {
		dec++
	}
	return func(x float64) string {
		if math.Abs(x) < step/1e6 {
			x = 0
		}
		return strconv.FormatFloat(x, 'f', dec, 64)
	}
}

// armValues are the values of metric in each replica of arm, with their replicas.
func armValues(res *Result, arm, metric string) ([]float64, []*Replica) {
	var xs []float64
	var reps []*Replica
	for _, r := range res.Replicas {
		if r.Arm == arm {
			if x := r.value(metric); !math.IsNaN(x) && !math.IsInf(x, 0) {
				xs, reps = append(xs, x), append(reps, r)
			}
		}
	}
	return xs, reps
}

// chartOf lays out the box-and-strip plot of metric m: one row per arm on a
// shared axis; the box (Q1 to Q3, the median) and the whiskers (to the
// extremes) over the passing replicas only, the same data; one dot per
// replica, hollow red when it failed (not in the box). Ticks are round numbers
// in the metric's unit.
func chartOf(res *Result, m MetricCompare) metricChart {
	c := metricChart{Metric: m.Metric, Decides: m.Decides, W: chartW, H: 2*rowH + axisH}
	c.Title = fmt.Sprintf("%s (%s)", m.Metric, MetricUnit(m.Metric))
	bx, br := armValues(res, Baseline, m.Metric)
	mx, mr := armValues(res, Mutated, m.Metric)
	lo, hi := axisRange(append(slices.Clone(bx), mx...))
	step := niceStep((hi - lo) / 4)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if hi <= lo {
		hi = lo + step
	}
	scale := func(x float64) float64 {
		at := chartLeft + (x-lo)/(hi-lo)*(chartW-chartLeft-chartRight)
		if math.IsNaN(at) || math.IsInf(at, 0) {
			return chartLeft // a range too wide for float64
		}
		return round1(at)
	}
	res1 := MetricResolution(m.Metric)
	for i, arm := range []struct {
		name string
		xs   []float64
		reps []*Replica
	}{{Baseline, bx, br}, {Mutated, mx, mr}} {
		row := boxRow{Arm: arm.name, Y: float64(i) * rowH, Mid: float64(i)*rowH + rowH/2}
		row.Top, row.Bottom = row.Mid-15, row.Mid+15
		var passing []float64
		for j, x := range arm.xs {
			if arm.reps[j].Passed {
				passing = append(passing, stats.RoundTo(x, res1))
			}
		}
		row.Empty = len(passing) == 0
		if !row.Empty {
			sum := stats.Summarize(passing)
			row.Lo, row.Hi = scale(slices.Min(passing)), scale(slices.Max(passing))
			row.Q1, row.Q3, row.Med = scale(sum.Q1), scale(sum.Q3), scale(sum.Median)
			row.BoxW = round1(math.Max(row.Q3-row.Q1, 1))
			row.Summary = fmt.Sprintf("passing replicas: median %s [%s, %s], n=%d", num(sum.Median), num(sum.Q1), num(sum.Q3), len(passing))
		}
		for j, x := range arm.xs {
			r := arm.reps[j]
			d := dot{X: scale(x), Y: round1(row.Mid + float64(j%5-2)*3), Class: "pass"}
			if !r.Passed {
				d.Class = "fail"
			}
			d.Title = fmt.Sprintf("%s #%d (%s): %s = %s %s, %s", r.Arm, r.Index, r.Session, m.Metric, num(stats.RoundTo(x, res1)), MetricUnit(m.Metric), d.Class)
			row.Dots = append(row.Dots, d)
		}
		c.Rows = append(c.Rows, row)
	}
	c.AxisY, c.AxisEnd = 2*rowH, chartW-chartRight
	format := tickFormat(step)
	for _, x := range tickValues(lo, hi, step) {
		c.Ticks = append(c.Ticks, tick{X: scale(x), Y: c.AxisY + 16, Label: format(x)})
	}
	return c
}

// axisRange is a non-empty range holding xs, padded by 5% each side.
func axisRange(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 1
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.1, 1)
		if lo >= 0 && lo-pad < 0 {
			return 0, hi + pad
		}
		return lo - pad, hi + pad
	}
	pad := (hi - lo) * 0.05
	if lo >= 0 && lo-pad < 0 {
		return 0, hi + pad // counts and sizes never go below 0
	}
	return lo - pad, hi + pad
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// heatmapOf is the dispatch x arm grid: each cell the arm's usual outcome, its
// colour the determinism (green 1, through amber, to red at 0.5 or less).
func heatmapOf(nz Noise) []heatRow {
	rows := make([]heatRow, 0, len(nz.Dispatches))
	for _, d := range nz.Dispatches {
		cell := func(arm, mode string, score float64, runs int) heatCell {
			if runs == 0 {
				return heatCell{Arm: arm, Mode: "did not run", Score: "-", Fill: "hsl(0, 0%, 88%)"}
			}
			return heatCell{Arm: arm, Mode: orDash(mode), Score: fmt.Sprintf("%.2f", score), Fill: heatFill(score)}
		}
		rows = append(rows, heatRow{ReplayOf: d.ReplayOf, Role: d.Role, Effect: d.Effect, HolmP: num(d.HolmP), Cells: [2]heatCell{
			cell(Baseline, d.BaselineMode, d.Baseline, d.BaselineRuns),
			cell(Mutated, d.MutatedMode, d.Mutated, d.MutatedRuns),
		}})
	}
	return rows
}

// heatFill maps a determinism score to a colour: hue 0 (red) at 0.5 or less to
// 120 (green) at 1.
func heatFill(score float64) string {
	t := math.Min(math.Max((score-0.5)/0.5, 0), 1)
	return fmt.Sprintf("hsl(%d, 60%%, 78%%)", int(math.Round(t*120)))
}

// firstDivergence finds, in dispatch order, the first dispatch whose usual
// outcome differs between the arms, and the first whose replicas disagree
// within an arm.
func firstDivergence(nz Noise) divergence {
	var dv divergence
	for i := range nz.Dispatches {
		d := &nz.Dispatches[i]
		if dv.Effect == nil && d.Effect {
			dv.Effect = d
		}
		if dv.Noise == nil && (d.Baseline < 1 || d.Mutated < 1) {
			dv.Noise = d
		}
	}
	return dv
}
