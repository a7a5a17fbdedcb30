package redispatch

import (
	"fmt"
	"io"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// DispatchProgress names one re-dispatch for a progress display: it is the N-th
// of Of, gets seq Seq and re-runs original seq ReplayOf.
type DispatchProgress struct {
	N, Of, Seq, ReplayOf int
	Role, Phase          string
	// Task is the task number as text, "" for none.
	Task string
}

// Label is "seq 23 (replay of 13) cleanup phase 3 task 1".
func (d DispatchProgress) Label() string {
	s := fmt.Sprintf("seq %d (replay of %d) %s phase %s", d.Seq, d.ReplayOf, d.Role, d.Phase)
	if d.Task != "" {
		s += " task " + d.Task
	}
	return report.Safe(s)
}

// ProgressReporter is told when each re-dispatch starts and finishes; line is the
// finished dispatch's one-line result. Calls come from several goroutines.
type ProgressReporter interface {
	DispatchStarted(d DispatchProgress)
	DispatchFinished(d DispatchProgress, line string)
}

// LineProgress reports progress as plain lines for a log or a pipe: one when a
// dispatch starts and one when it finishes.
type LineProgress struct{ W io.Writer }

// DispatchStarted writes "dispatch N/M started: LABEL".
func (l LineProgress) DispatchStarted(d DispatchProgress) {
	fmt.Fprintf(l.W, "dispatch %d/%d started: %s\n", d.N, d.Of, d.Label())
}

// DispatchFinished writes the finished dispatch's line.
func (l LineProgress) DispatchFinished(_ DispatchProgress, line string) {
	fmt.Fprintln(l.W, line)
}

func (p *prepared) progress(n, of int) DispatchProgress {
	d := DispatchProgress{N: n, Of: of, Seq: p.seq, ReplayOf: p.d.Seq, Role: p.d.Role, Phase: p.d.Phase}
	if p.d.Task != nil {
		d.Task = fmt.Sprint(*p.d.Task)
	}
	return d
}

// finishedLine is the one-line result of a finished dispatch.
func finishedLine(dp DispatchProgress, r agent.Response) string {
	how := "live"
	if r.Reused {
		how = "reused recording"
	}
	line := fmt.Sprintf("dispatch %d/%d: %s: %s (%s, %.1fs)", dp.N, dp.Of, dp.Label(), r.Status, how, r.DurationS)
	if r.Reason != "" && r.Status != manifest.StatusCompleted {
		line += ": " + r.Reason
	}
	return report.SafeText(line)
}
