package resume

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
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

// NotStarted reports whether no attempt at the item has a manifest line: its
// dispatch files were written and no agent ran (dispatch.py appends the
// dispatched line before the orchestrator starts the agent). Nothing proves
// such a file whole (no input_chars measured it, and a crash during its write
// cuts it), so its body is the orchestrator's unfinished write, not evidence:
// the resume does not send it, and the skill dispatches that work again from
// its own instructions (the plan's row says "skill").
func (it WorkItem) NotStarted() bool {
	for _, d := range it.Attempts {
		if d.Recorded {
			return false
		}
	}
	return !it.Dispatch.Recorded
}

// hasLaterAttempt reports whether a later dispatch attempted d's work again: a
// replay of it (after a restore that undid d's commits) or, when d failed, a retry
// of the same work. Such an attempt is charged with no commit and never verified
// on its own. The answers are computed once per analysis.
func (a *Analysis) hasLaterAttempt(d *pipeline.Dispatch) bool {
	if a.later == nil {
		a.later, a.item = a.laterAttempted()
	}
	return a.later[d.Seq]
}

// itemOf returns the seq that names d's work item: the first attempt its
// replay_of chain or its retries lead to (laterAttempted).
func (a *Analysis) itemOf(d *pipeline.Dispatch) int {
	if a.item == nil {
		a.later, a.item = a.laterAttempted()
	}
	if it, ok := a.item[d.Seq]; ok {
		return it
	}
	return d.Seq
}

// laterAttempted returns the seqs some later recorded dispatch attempted again,
// and each seq's item (the seq that names it). Attempts are one item through
// replay_of chains and through retries: a retry of a failed attempt joins that
// attempt's item, so a replay of the item's first attempt supersedes the retry
// too.
func (a *Analysis) laterAttempted() (map[int]bool, map[int]int) {
	out := map[int]bool{}
	item := make(map[int]int, len(a.Dispatches)) // seq -> the seq that names its item
	var failed []*pipeline.Dispatch
	for _, d := range a.Dispatches { // in seq order: a retried attempt comes first
		root := a.rootOf(d)
		if r, ok := item[root]; ok && root != d.Seq {
			root = r
		}
		if d.ReplayOf == 0 {
			for i := len(failed) - 1; i >= 0; i-- {
				if a.retries(failed[i], d) {
					root = item[failed[i].Seq]
					break
				}
			}
		}
		item[d.Seq] = root
		if d.Failed() {
			failed = append(failed, d)
		}
	}
	firstDone := map[int]int{} // item -> its first completed attempt's seq
	for _, e := range a.Dispatches {
		if e.Recorded && e.Done() {
			if _, ok := firstDone[item[e.Seq]]; !ok {
				firstDone[item[e.Seq]] = e.Seq
			}
		}
	}
	newest := map[int]int{} // item -> its newest recorded seq
	a.idle = map[int]bool{}
	for _, e := range a.Dispatches {
		if done, ok := firstDone[item[e.Seq]]; ok && done < e.Seq && idleReplay(e) {
			// an interrupted replay of output work an earlier attempt
			// completed: that attempt is the one verified
			a.idle[e.Seq] = true
			continue
		}
		if e.Recorded {
			newest[item[e.Seq]] = max(newest[item[e.Seq]], e.Seq)
		}
	}
	for _, d := range a.Dispatches {
		if newest[item[d.Seq]] > d.Seq {
			out[d.Seq] = true
			continue
		}
		if !d.Failed() {
			continue
		}
		for _, e := range a.Dispatches {
			if e.Recorded && a.retries(d, e) {
				out[d.Seq] = true
				break
			}
		}
	}
	return out, item
}

// idleReplay reports whether d is a replay that never completed (in flight
// at a crash, never failed) of work that writes no project file: an output
// role's (its output lies beside the dispatch files, where no restore
// reaches) or a conversation-only role's. Such a replay, of an item an
// earlier attempt completed, proves nothing undone: the restore before it
// undid none of that attempt's work, and its interruption left nothing in the
// project. A mutating replay is never idle: the restore undid the earlier
// attempt's commit, and the replay's own may be on the branch.
func idleReplay(d *pipeline.Dispatch) bool {
	return d.Recorded && d.ReplayOf > 0 && d.Status == manifest.StatusDispatched &&
		(d.Class == templates.RoleOutput || d.Class == templates.RoleNonArtifact)
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

// retries reports whether e retries d (isRetry) and the evidence says it is the
// same work: the same task, or for a dispatch with no task the same
// instructions (sameInstructions). Role and phase alone never make two
// dispatches one piece of work: a scan of another repository is other work.
func (a *Analysis) retries(d, e *pipeline.Dispatch) bool {
	if !isRetry(d, e) {
		return false
	}
	return d.Task != nil || a.sameInstructions(d, e) || a.oneWorkWithoutBody(d, e)
}

// oneWorkWithoutBody reports whether task-less retry candidates d and e, one
// of whose instructions cannot be read (its dispatch file gone), are the
// role's one work in their phase: the gone one would be rebuilt from the
// role's template alone (ambiguousRebuild finds no sign of several units of
// the role in the phase: no sibling ran beside it, no two others were given
// different instructions), and a template-only prompt asks for that one work,
// the other's. Kept apart, the resume re-executed the work twice (the failed
// attempt from its own file, the rebuilt one from the template). Two readable
// bodies are compared (sameInstructions), never merged here.
func (a *Analysis) oneWorkWithoutBody(d, e *pipeline.Dispatch) bool {
	if a.describe == nil || d.Task != nil {
		return false
	}
	gone := 0
	for _, x := range []*pipeline.Dispatch{d, e} {
		if ownSeqless(a.describe(x), x.Seq) != "" {
			continue
		}
		if a.ambiguousRebuild(x) != "" {
			return false
		}
		gone++
	}
	return gone > 0
}

// sameInstructions reports whether two task-less dispatches were given the same
// instructions: the context their dispatch files carry (Input.Describe) is the
// same once each one's own seq is set aside ("2-scanner-output.md" and
// "3-scanner-output.md" name the same output), or, where the wording changed,
// both name the same things (paths, hosts, dotted names: "Review docs/plan.md"
// and "Review the revised docs/plan.md"). Without a readable context on both
// sides there is no evidence, and they are not the same work.
func (a *Analysis) sameInstructions(d, e *pipeline.Dispatch) bool {
	if a.describe == nil {
		return false
	}
	x, y := ownSeqless(a.describe(d), d.Seq), ownSeqless(a.describe(e), e.Seq)
	if x == "" || y == "" {
		return false
	}
	if x == y {
		return true
	}
	nx, ny := namesIn(x), namesIn(y)
	return len(nx) > 0 && slices.Equal(nx, ny)
}

// ownSeqless returns text with its words collapsed to single spaces and the
// dispatch's own seq, where it prefixes a name ("7-reviewer-output.md"), set
// aside.
func ownSeqless(text string, seq int) string {
	prefix := strconv.Itoa(seq) + "-"
	words := strings.Fields(text)
	for i, w := range words {
		if j := strings.Index(w, prefix); j >= 0 && (j == 0 || !isDigit(w[j-1])) {
			words[i] = w[:j] + "#-" + w[j+len(prefix):]
		}
	}
	return strings.Join(words, " ")
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// namesIn returns the sorted, distinct names a text gives: words with a '/' or
// an inner '.' (paths, hosts, files, dotted identifiers), trimmed of the
// punctuation around them.
func namesIn(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, "`'\"()[]{}<>,;:!?.")
		if !strings.ContainsAny(w, "/.") || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	sort.Strings(out)
	return out
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
		if it := &a.Items[i]; !it.Dispatch.Recorded && d.Recorded && d.ReplayOf == 0 {
			// re-dispatched from its first recorded attempt: the file with
			// no line may be cut by the crash
			it.Dispatch = d
		}
	}
}

// retryOf returns the item d is another attempt at: the latest item of the
// same work whose latest attempt ended failed or error before d (a retry), or
// never started (resends).
func (a *Analysis) retryOf(d *pipeline.Dispatch) (int, bool) {
	for i := len(a.Items) - 1; i >= 0; i-- {
		it := a.Items[i]
		last := it.Attempts[len(it.Attempts)-1]
		if a.retries(last, d) || a.resends(last, d) {
			return i, true
		}
	}
	return 0, false
}

// resends reports whether e is d's work sent again: d is a dispatch file with
// no manifest line, whose agent never started, and e a later dispatch of the
// same role, phase and task (for task-less work, the same instructions:
// sameInstructions). With no agent of d running, e cannot be a sibling
// working beside it: it is the same intent carried out again.
func (a *Analysis) resends(d, e *pipeline.Dispatch) bool {
	if d.Recorded || e.Seq <= d.Seq || !pipeline.SameWork(d, e) {
		return false
	}
	return d.Task != nil || a.sameInstructions(d, e)
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

// nameUnidentifiedKept names, as a failed check that moves no boundary, each
// kept task-less dispatch (skipped, or kept on disk where nothing restores)
// whose instructions cannot be read (its dispatch file
// gone) beside another dispatch of its role and phase (ambiguousRebuild): its
// work is done and verified, but the hand-off lists it by seq and role only,
// and nothing tells the skill which of the phase's pieces of work it was, so
// the skill may dispatch that work again.
func (a *Analysis) nameUnidentifiedKept() {
	if a.describe == nil {
		return
	}
	seen := map[int]bool{}
	for _, d := range append(slices.Clone(a.Skip), a.Kept...) {
		if seen[d.Seq] {
			continue
		}
		seen[d.Seq] = true
		if d.Task != nil || !d.Recorded || !d.Done() || ownSeqless(a.describe(d), d.Seq) != "" {
			continue
		}
		why := a.ambiguousRebuild(d)
		if why == "" {
			continue
		}
		a.Failures = append(a.Failures, Check{Seq: d.Seq, Role: d.Role, Check: "which work it was",
			Detail: fmt.Sprintf("its dispatch file is gone and it has no task, and %s: its work is verified and kept, but nothing tells which of the phase's %s dispatches it was, so the skill may dispatch that work again", why, d.Role)})
	}
}
