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
	Res        *Result
	Generated  string
	PerArm     int
	Verdict    string
	Stats      []string
	RuleSteps  []ruleStep
	Charts     []metricChart
	Heatmap    []heatRow
	Divergence divergence
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
	v := htmlView{Res: res, PerArm: len(res.Replicas) / 2, Verdict: strings.ToUpper(res.Decision.Verdict),
		Generated: res.Generated.UTC().Format("2006-01-02 15:04:05 UTC")}
	v.Stats = StatisticsLines(res.Decision)
	for i, line := range strings.Split(strings.TrimSpace(res.RuleText), "\n") {
		num, text, ok := strings.Cut(line, ". ")
		if _, err := strconv.Atoi(num); !ok || err != nil {
			text = line // the rule's closing note on its level, not a step
		}
		v.RuleSteps = append(v.RuleSteps, ruleStep{N: i + 1, Text: text, Decisive: i+1 == res.Decision.Step})
	}
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
// shared axis, the box from Q1 to Q3, the median, whiskers to the extremes and
// one dot per replica (hollow when it failed).
func chartOf(res *Result, m MetricCompare) metricChart {
	c := metricChart{Metric: m.Metric, Decides: m.Decides, W: chartW, H: 2*rowH + axisH}
	c.Title = m.Metric
	bx, br := armValues(res, Baseline, m.Metric)
	mx, mr := armValues(res, Mutated, m.Metric)
	lo, hi := axisRange(append(slices.Clone(bx), mx...))
	scale := func(x float64) float64 {
		at := chartLeft + (x-lo)/(hi-lo)*(chartW-chartLeft-chartRight)
		if math.IsNaN(at) || math.IsInf(at, 0) {
			return chartLeft // a range too wide for float64
		}
		return round1(at)
	}
	for i, arm := range []struct {
		name string
		xs   []float64
		reps []*Replica
		sum  stats.Summary
	}{{Baseline, bx, br, m.Baseline}, {Mutated, mx, mr, m.Mutated}} {
		row := boxRow{Arm: arm.name, Y: float64(i) * rowH, Mid: float64(i)*rowH + rowH/2, Empty: len(arm.xs) == 0}
		row.Top, row.Bottom = row.Mid-15, row.Mid+15
		if !row.Empty {
			row.Lo, row.Hi = scale(slices.Min(arm.xs)), scale(slices.Max(arm.xs))
			row.Q1, row.Q3, row.Med = scale(arm.sum.Q1), scale(arm.sum.Q3), scale(arm.sum.Median)
			row.BoxW = round1(math.Max(row.Q3-row.Q1, 1))
			row.Summary = fmt.Sprintf("median %s [%s, %s], n=%d", num(arm.sum.Median), num(arm.sum.Q1), num(arm.sum.Q3), len(arm.xs))
		}
		for j, x := range arm.xs {
			r := arm.reps[j]
			d := dot{X: scale(x), Y: round1(row.Mid + float64(j%5-2)*3), Class: "pass"}
			if !r.Passed {
				d.Class = "fail"
			}
			d.Title = fmt.Sprintf("%s #%d (%s): %s = %s, %s", r.Arm, r.Index, r.Session, m.Metric, num(x), d.Class)
			row.Dots = append(row.Dots, d)
		}
		c.Rows = append(c.Rows, row)
	}
	c.AxisY, c.AxisEnd = 2*rowH, chartW-chartRight
	for i := 0; i <= 4; i++ {
		x := lo + (hi-lo)*float64(i)/4
		c.Ticks = append(c.Ticks, tick{X: scale(x), Y: c.AxisY + 16, Label: num(x)})
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
