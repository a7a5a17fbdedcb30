package resume

import (
	"fmt"
	"time"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// WorkItem is one unit of the pipeline's work to re-execute: a role's work on one
// phase and task. A dispatch, the replays of it (replay_of chains) and the retries
// of it after a failure are attempts at one item, re-dispatched once.
type WorkItem struct {
	// Dispatch is the item's first attempt: the one re-dispatched (replay_of its
	// seq).
	Dispatch *pipeline.Dispatch
	// Attempts are every attempt at the item that lies after the resume point, in
	// seq order.
	Attempts []*pipeline.Dispatch
}

// hasLaterAttempt reports whether a later dispatch attempted d's work again: a
// replay of it (after a restore that undid d's commits) or, when d failed, a retry
// of the same role, phase and task. Such an attempt is charged with no commit.
func (a *Analysis) hasLaterAttempt(d *pipeline.Dispatch) bool {
	root := a.rootOf(d)
	for _, e := range a.Dispatches {
		if e.Seq <= d.Seq || !e.Recorded {
			continue
		}
		if a.rootOf(e) == root || isRetry(d, e) {
			return true
		}
	}
	return false
}

// retryTolerance absorbs the rounding of header timestamps and durations (whole
// seconds) between a failure's end and the dispatch of its retry.
const retryTolerance = 2 * time.Second

// isRetry reports whether e retries d: d ended failed or error, and e is a later
// dispatch of the same role, phase and task dispatched after d ended (a parallel
// sibling dispatched with d is other work, however alike: task-less investigators
// of one phase are each their own item). The manifest's line order decides when
// both are recorded: e's first line (its first dispatch) after d's last (its
// failure) is a retry, before it a sibling, even when e was itself retried on its
// own seq later and its dispatch file's header names only that retry's time.
// Otherwise the header times decide, and without times the seq order.
func isRetry(d, e *pipeline.Dispatch) bool {
	if e.Seq <= d.Seq || !d.Failed() || !pipeline.SameWork(d, e) {
		return false
	}
	if d.Entry != nil && e.Entry != nil && d.Entry.Line > 0 && e.Entry.FirstLine > 0 {
		return e.Entry.FirstLine > d.Entry.Line
	}
	if d.Time.IsZero() || e.Time.IsZero() {
		return true
	}
	if !e.Time.After(d.Time) {
		return false // dispatched with d: a sibling
	}
	if end, ok := d.End(); ok {
		return !e.Time.Before(end.Add(-retryTolerance))
	}
	return true
}

// groupItems groups Redo into work items: a dispatch that replays another (its
// replay_of chain) joins that one's item, and so does a retry: a later dispatch of
// the same role, phase and task as an attempt that ended failed or error.
func (a *Analysis) groupItems() {
	a.Items = nil
	byRoot := map[int]int{} // root seq of a replay chain -> index in Items
	for _, d := range a.Redo {
		root := a.rootOf(d)
		i, ok := byRoot[root]
		if !ok && d.ReplayOf == 0 {
			i, ok = a.retryOf(d)
		}
		if !ok {
			first := d
			if r := a.find(root); r != nil {
				first = r
			}
			i = len(a.Items)
			a.Items = append(a.Items, WorkItem{Dispatch: first})
		}
		byRoot[root] = i
		a.Items[i].Attempts = append(a.Items[i].Attempts, d)
	}
}

// retryOf returns the item d retries: the latest item of the same work whose
// latest attempt ended failed or error before d.
func (a *Analysis) retryOf(d *pipeline.Dispatch) (int, bool) {
	for i := len(a.Items) - 1; i >= 0; i-- {
		it := a.Items[i]
		last := it.Attempts[len(it.Attempts)-1]
		if isRetry(last, d) {
			return i, true
		}
	}
	return 0, false
}

// explainMatching adds to Checks the commit attribution (for --explain): each
// mutating dispatch with the commit the one-to-one matching gave it and why, or
// that it got none; nothing when no commit had to be attributed.
func (a *Analysis) explainMatching(v *verifier) {
	at := v.attribution
	if at == nil || at.Err != nil {
		return
	}
	for _, d := range a.Dispatches {
		w, ok := at.Windows[d.Seq]
		if !ok {
			continue
		}
		c := Check{Boundary: "commit attribution (one-to-one matching)", Seq: d.Seq, Role: d.Role, Check: "commit matched to it"}
		if got, ok := at.Assigned[d.Seq]; ok {
			c.OK = true
			c.Detail = fmt.Sprintf("%s %q: %s", short(got.Commit.Hash), got.Commit.Subject(), got.Why)
		} else {
			c.Detail = fmt.Sprintf("none of %s in %s..%s", report.Count(len(at.Candidates[d.Seq]), "commit"), report.Time(w[0]), report.Time(w[1]))
			if v.superseded != nil && v.superseded(d) {
				c.Detail = "none: a later attempt at the same work superseded it"
			}
		}
		a.Checks = append(a.Checks, c)
	}
}

func (a *Analysis) warn(msg string) {
	for _, w := range a.Warnings {
		if w == msg {
			return
		}
	}
	a.Warnings = append(a.Warnings, msg)
}
