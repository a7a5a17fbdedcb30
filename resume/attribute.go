package resume

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// Attribution is the one-to-one assignment of project commits to the mutating
// dispatches whose time windows hold them: a maximum bipartite matching that gives
// a commit to as many dispatches as possible, preferring the commit that names the
// dispatch's task, then one sharing words with the task's description, then one
// near the end of its window (see match). No commit counts for two dispatches.
type Attribution struct {
	// Assigned maps a dispatch seq to the commit attributed to it.
	Assigned map[int]AttributedCommit
	// Owner maps a commit hash to the seq it was attributed to.
	Owner map[string]int
	// Candidates maps a dispatch seq to the commits in its window, oldest first.
	Candidates map[int][]pipeline.Commit
	// InFlight maps a dispatch seq to the mutating dispatches in flight in its window
	// (itself included).
	InFlight map[int][]int
	// Windows maps a dispatch seq to its commit window.
	Windows map[int][2]time.Time
	// Err is set when the project history could not be read.
	Err error

	// tasks memoises the task numbers each commit's message names (taskNumbers),
	// by commit hash: a commit is a candidate of every window that holds it.
	tasks map[string][]string
}

// AttributedCommit is one commit given to a dispatch, and why.
type AttributedCommit struct {
	Commit pipeline.Commit
	// Why names the evidence: "names task 2", "shares words with its task: login,
	// form", or that the one-to-one matching gave it a commit of its window.
	Why string
}

// attributionStopWords are words too common in commit messages and task texts to
// tell two tasks apart.
var attributionStopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "after": true,
	"before": true, "this": true, "that": true, "task": true, "tasks": true, "feat": true, "fix": true,
	"refactor": true, "test": true, "tests": true, "chore": true, "docs": true, "wip": true,
	"implement": true, "implementation": true, "implemented": true, "add": true, "adds": true,
	"added": true, "update": true, "updated": true, "clean": true, "cleanup": true, "internal": true,
	"make": true, "use": true, "new": true, "code": true, "file": true, "files": true, "plan": true,
	"its": true, "are": true, "all": true, "not": true, "per": true, "via": true,
}

// wordsOf returns the distinctive lower-case words of text (three letters or more,
// stop words left out), split at every character that is not a letter or digit.
func wordsOf(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 && !attributionStopWords[w] && !isDigits(w) {
			out[w] = true
		}
	}
	return out
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// sharedWords returns the words of msg that are also in desc, sorted.
func sharedWords(desc map[string]bool, msg string) []string {
	var out []string
	for w := range wordsOf(msg) {
		if desc[w] {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// attribute assigns the commits of the mutating dispatches' windows (SPEC §4 step 3).
// describe returns a dispatch's task description (dispatch body, plan); it may be nil.
func (v *verifier) attribute(ds []*pipeline.Dispatch, describe func(*pipeline.Dispatch) string) *Attribution {
	var mut []*pipeline.Dispatch
	for _, d := range ds {
		if d.Recorded && v.hasWindow(d) && (d.Class == templates.RoleMutating || (d.Class == templates.RoleUnknown && v.mayCommit(d))) {
			mut = append(mut, d)
		}
	}
	n := len(mut) // size hints: the maps hold about one entry per mutating dispatch
	at := &Attribution{Assigned: make(map[int]AttributedCommit, n), Owner: make(map[string]int, n), Candidates: make(map[int][]pipeline.Commit, n),
		InFlight: make(map[int][]int, n), Windows: make(map[int][2]time.Time, n), tasks: make(map[string][]string, n)}
	tol := time.Duration(v.profile.CommitWindowToleranceS) * time.Second
	for _, d := range mut {
		if d.Time.IsZero() {
			lo, hi, _ := v.untimedWindow(d)
			at.Windows[d.Seq] = [2]time.Time{lo.Add(-tol), hi.Add(tol)}
			continue
		}
		w := v.committedIn(d)
		at.Windows[d.Seq] = [2]time.Time{w.Time.Add(-tol), v.windowEnd(w).Add(tol)}
	}
	if v.log == nil {
		return at
	}
	ws := make([][2]time.Time, len(mut))
	for i, e := range mut {
		ws[i] = at.Windows[e.Seq]
	}
	ov := newOverlaps(ws)
	for i, d := range mut {
		w := ws[i]
		commits, err := v.log.Between(w[0], w[1])
		if err != nil {
			at.Err = err
			return at
		}
		// mut holds one dispatch per seq (recorded dispatches are one per manifest
		// entry, and the manifest has one entry per seq), so d's lists start empty.
		if len(v.others) > 0 {
			commits = slices.DeleteFunc(slices.Clone(commits), func(c pipeline.Commit) bool { return v.othersWordier(d, c, describe, at) })
		}
		if len(commits) > 0 {
			cands := slices.Clone(commits)
			slices.Reverse(cands) // oldest first
			at.Candidates[d.Seq] = cands
		}
		if in := ov.with(w); len(in) > 0 {
			for k, j := range in { // in is new on every call: its indexes become seqs
				in[k] = mut[j].Seq
			}
			at.InFlight[d.Seq] = in
		}
	}
	at.match(mut, describe, v.superseded)
	return at
}

// othersWordier reports whether commit c, which d's window holds, is rather
// the work of another session's dispatch whose window holds it too: it does
// not name d's task, and it names that dispatch's task, or that dispatch's
// context and role share more words
// with it than d's description and role do. Such a commit is no candidate of
// d (crash simulator seed 9953: this run's task 3, its dispatch file gone, has
// the long window the manifest's order gives it and nothing to read; the
// matching gave it the other session's fix, made 26 seconds after task 3's
// own commit and nearer the window's end, and task 3's commit, claimed by no
// dispatch of this run, went to the other session: the restore undid the fix
// and kept task 3's commit, which the redo made again). A tie stays d's: a
// window of this run that holds a commit is evidence as good as another's.
func (v *verifier) othersWordier(d *pipeline.Dispatch, c pipeline.Commit, describe func(*pipeline.Dispatch) string, at *Attribution) bool {
	if d.Task != nil && at.namesTask(c, *d.Task) {
		return false
	}
	theirs := -1
	for _, o := range v.others {
		if o.Window(c.Time, v.now) {
			if namesOthersTask(c, o) {
				return true // it names that dispatch's task, not d's (seed 35677)
			}
			theirs = max(theirs, len(sharedWords(wordsOf(o.Context+"\n"+o.Role), c.Message)))
		}
	}
	if theirs <= 0 {
		return false
	}
	desc := d.Role
	if describe != nil {
		desc = describe(d) + "\n" + d.Role
	}
	return theirs > len(sharedWords(wordsOf(desc), c.Message))
}

// hasWindow reports whether d has a commit window: a header time, or the
// bounds the manifest's order gives a dispatch whose file is gone
// (untimedWindow).
func (v *verifier) hasWindow(d *pipeline.Dispatch) bool {
	if !d.Time.IsZero() {
		return true
	}
	_, _, ok := v.untimedWindow(d)
	return ok
}

// untimedWindow bounds the work of a completed dispatch whose header time is
// unknown (its dispatch file gone: manifest lines carry no time) by the
// manifest's order, in which dispatch.py appends each line when it happens: d
// was dispatched after every dispatch whose first line comes before d's own
// was (lo: the latest such header time), and it ended before every dispatch
// whose first line comes after d's completion line was dispatched (hi: the
// earliest such header time). d was also dispatched before every dispatch
// whose first line comes after its own, so with its completion line's duration
// it ended by the earliest such header time plus that duration, the bound when
// it is earlier or when no dispatch came after d's completion (crash simulator
// seeds 17081 and 20646: task 3 completed last of its wave, unbounded, and its
// commit went to another session's window). ok is false without a completion
// line or either bound, and when a boundary checkpoint was taken between lo
// and hi: d is placed at lo (placeUntimed), and a commit of its window could
// then lie on either side of that checkpoint, in the restored tree or not.
func (v *verifier) untimedWindow(d *pipeline.Dispatch) (lo, hi time.Time, ok bool) {
	if d.Entry == nil || d.Entry.FirstLine <= 0 || d.Entry.Line <= d.Entry.FirstLine || !d.Done() {
		return lo, hi, false
	}
	var startHi time.Time // the earliest header time of a dispatch after d's first line
	for _, e := range v.dispatches {
		if e.Time.IsZero() || e.Entry == nil || e.Entry.FirstLine <= 0 {
			continue
		}
		if e.Entry.FirstLine < d.Entry.FirstLine && e.Time.After(lo) {
			lo = e.Time
		}
		if e.Entry.FirstLine > d.Entry.FirstLine && (startHi.IsZero() || e.Time.Before(startHi)) {
			startHi = e.Time
		}
		if e.Entry.FirstLine > d.Entry.Line && (hi.IsZero() || e.Time.Before(hi)) {
			hi = e.Time
		}
	}
	if !startHi.IsZero() && d.DurationS != nil {
		if end := startHi.Add(time.Duration(*d.DurationS * float64(time.Second))); hi.IsZero() || end.Before(hi) {
			hi = end
		}
	}
	if lo.IsZero() || hi.IsZero() || hi.Before(lo) {
		return lo, hi, false
	}
	for _, m := range v.marks {
		if m.After(lo) && m.Before(hi) {
			return lo, hi, false
		}
	}
	return lo, hi, true
}

// RecordedByKey is the key of a re-dispatch's completion line that a
// recording served: the dispatch ("<seq>-<template>") whose live run recorded
// it. A served recording calls no agent and re-applies the recorded commits as
// they were made, their times included, so they lie in that dispatch's window,
// not in the serving dispatch's own.
const RecordedByKey = "recorded_by"

// committedIn returns the dispatch whose window holds d's commits: the one
// that recorded the response served to d (RecordedByKey), when it is a timed
// dispatch of this run with d's template; d itself otherwise.
func (v *verifier) committedIn(d *pipeline.Dispatch) *pipeline.Dispatch {
	if d.Entry == nil || d.Entry.Extra[RecordedByKey] == nil {
		return d
	}
	var by string
	if json.Unmarshal(d.Entry.Extra[RecordedByKey], &by) != nil {
		return d
	}
	seqText, template, ok := strings.Cut(by, "-")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq == d.Seq || template != d.Template {
		return d
	}
	for _, e := range v.dispatches {
		if e.Seq == seq && e.Recorded && !e.Time.IsZero() && e.Template == d.Template {
			return e
		}
	}
	return d
}

// overlaps finds the windows that overlap a given one without comparing it with every
// window: the windows sorted by start, and the longest window's length, bound the
// ones that can reach it.
type overlaps struct {
	ws     [][2]time.Time
	order  []int // indexes of ws, by start
	maxLen time.Duration
}

func newOverlaps(ws [][2]time.Time) *overlaps {
	o := &overlaps{ws: ws, order: make([]int, len(ws))}
	for i, w := range ws {
		o.order[i] = i
		if l := w[1].Sub(w[0]); l > o.maxLen {
			o.maxLen = l
		}
	}
	sort.SliceStable(o.order, func(a, b int) bool { return ws[o.order[a]][0].Before(ws[o.order[b]][0]) })
	return o
}

// with returns, in ascending order, the indexes of the windows that overlap w (both
// ends included).
func (o *overlaps) with(w [2]time.Time) []int {
	k := sort.Search(len(o.order), func(i int) bool { return o.ws[o.order[i]][0].After(w[1]) })
	var out []int
	for i := k - 1; i >= 0; i-- {
		e := o.ws[o.order[i]]
		if e[0].Before(w[0]) && w[0].Sub(e[0]) > o.maxLen {
			break // this window and every earlier one ends before w starts
		}
		if !e[1].Before(w[0]) {
			out = append(out, o.order[i])
		}
	}
	sort.Ints(out)
	return out
}

func (at *Attribution) give(d *pipeline.Dispatch, c pipeline.Commit, why string) {
	at.Assigned[d.Seq] = AttributedCommit{Commit: c, Why: why}
	at.Owner[c.Hash] = d.Seq
}

// mayCommit reports whether a dispatch of a role the profile does not name may own
// a commit: unless its dispatch file asks only for a file or for nothing.
func (v *verifier) mayCommit(d *pipeline.Dispatch) bool {
	a := v.askOf(d)
	return a == pipeline.AskUnknown || a == pipeline.AskCommit
}

// match gives commits to dispatches one to one by a maximum-weight bipartite
// matching (maxWeightMatching, tiers in match.go): as many dispatches as possible
// get a commit whose message does not name another task (or, for a task-less
// dispatch, the task of a dispatch in flight with it); then, without taking one of
// those away, as many as possible get any commit of their window; then the commits
// that name the dispatch's task are preferred, then those sharing more words with
// its description, then those nearer the end of its window. A commit naming
// another task is a preference against, never a wall: messages mislead, and only
// one matching over all the edges finds the assignment in which a misnamed commit
// goes to its author while the named task's dispatch takes its own other commit. Attempts skip names (superseded by a later attempt
// at the same work) take part in nothing. A dispatch matched without evidence, or
// against it, keeps its commit only when every maximum matching gives it one
// (essential).
func (at *Attribution) match(mut []*pipeline.Dispatch, describe func(*pipeline.Dispatch) string, skip func(*pipeline.Dispatch) bool) {
	bySeq := make(map[int]*pipeline.Dispatch, len(mut))
	for _, d := range mut {
		bySeq[d.Seq] = d
	}
	var rows []*pipeline.Dispatch
	for _, d := range mut {
		if skip == nil || !skip(d) {
			rows = append(rows, d)
		}
	}
	colOf := map[string]int{}
	var cols []pipeline.Commit
	var edges []edge
	why := map[[2]int]string{}
	against := map[[2]int]bool{}
	for i, d := range rows {
		// The description is read (from the dispatch file) only when a commit
		// needs it: most commits name their task.
		var desc map[string]bool
		described := describe == nil
		for _, c := range at.Candidates[d.Seq] {
			j, ok := colOf[c.Hash]
			if !ok {
				j = len(cols)
				colOf[c.Hash] = j
				cols = append(cols, c)
			}
			wt := edgeWeight + timeWeight*timeScore(c.Time, at.Windows[d.Seq][1])
			if at.namesOtherTask(c, d) || at.claimedByOther(c, d, bySeq) {
				against[[2]int{i, j}] = true
				edges = append(edges, edge{row: i, col: j, weight: wt})
				continue
			}
			wt += agreeingWeight
			if d.Task != nil && at.namesTask(c, *d.Task) {
				wt += taskWeight
				why[[2]int{i, j}] = fmt.Sprintf("names task %d", *d.Task)
			} else {
				if !described {
					desc, described = wordsOf(describe(d)), true
				}
				if shared := sharedWords(desc, c.Message); len(shared) > 0 {
					wt += wordWeight * int64(min(len(shared), maxWords-1))
					why[[2]int{i, j}] = "shares words with its task: " + strings.Join(shared, ", ")
				}
			}
			edges = append(edges, edge{row: i, col: j, weight: wt})
		}
	}
	at.assign(rows, cols, edges, why, against)
}

// assign matches rows to cols over edges (maxWeightMatching) and gives each
// matched dispatch its commit: at once when why names evidence, else (no evidence,
// or against marks a commit naming another task) only when every maximum matching
// over edges gives the dispatch one (essential).
func (at *Attribution) assign(rows []*pipeline.Dispatch, cols []pipeline.Commit, edges []edge, why map[[2]int]string, against map[[2]int]bool) {
	adj := make([][]int, len(rows))
	for _, e := range edges {
		adj[e.row] = append(adj[e.row], e.col)
	}
	for i, j := range maxWeightMatching(len(rows), len(cols), edges) {
		if j < 0 {
			continue
		}
		d := rows[i]
		reason := why[[2]int{i, j}]
		misnamed := against[[2]int{i, j}]
		if (reason == "" || misnamed) && !essential(adj, i) {
			// Only the matching's choice, no evidence: another maximum matching
			// leaves d without a commit, so its commit is not proven.
			continue
		}
		switch {
		case misnamed:
			reason = fmt.Sprintf("a commit of its window whose message names another task (%s, %s in flight): every one-to-one matching of them gives it one, so the message misleads",
				report.Count(len(at.Candidates[d.Seq]), "commit"), report.Count(len(at.InFlight[d.Seq]), "mutating dispatch"))
		case reason == "":
			reason = fmt.Sprintf("a commit of its window (%s, %s in flight): every one-to-one matching of them gives it one",
				report.Count(len(at.Candidates[d.Seq]), "commit"), report.Count(len(at.InFlight[d.Seq]), "mutating dispatch"))
		}
		at.give(d, cols[j], reason)
	}
}

// essential reports whether row r is matched in every maximum matching of the
// bipartite graph adj (rows to their columns): removing it lowers the size of a
// maximum matching of its connected component. Only then does a commit without
// evidence prove r's work: whichever way the commits are shared out one to one, r
// gets one.
func essential(adj [][]int, r int) bool {
	rows := componentRows(adj, r)
	return maxCardinality(adj, rows, -1) > maxCardinality(adj, rows, r)
}

// componentRows returns the rows connected to r through shared columns, r first.
func componentRows(adj [][]int, r int) []int {
	byCol := map[int][]int{}
	for i, cs := range adj {
		for _, c := range cs {
			byCol[c] = append(byCol[c], i)
		}
	}
	seen := map[int]bool{r: true}
	out := []int{r}
	for k := 0; k < len(out); k++ {
		for _, c := range adj[out[k]] {
			for _, i := range byCol[c] {
				if !seen[i] {
					seen[i] = true
					out = append(out, i)
				}
			}
		}
	}
	return out
}

// maxCardinality returns the size of a maximum matching of rows (without row
// skip) by augmenting paths (Kuhn's algorithm).
func maxCardinality(adj [][]int, rows []int, skip int) int {
	owner := map[int]int{}
	var try func(r int, seen map[int]bool) bool
	try = func(r int, seen map[int]bool) bool {
		for _, c := range adj[r] {
			if seen[c] {
				continue
			}
			seen[c] = true
			if o, taken := owner[c]; !taken || try(o, seen) {
				owner[c] = r
				return true
			}
		}
		return false
	}
	n := 0
	for _, r := range rows {
		if r != skip && try(r, map[int]bool{}) {
			n++
		}
	}
	return n
}

// claimedByOther reports whether c names a task while d has none and a dispatch
// of that task was in flight with d: the commit is that dispatch's.
func (at *Attribution) claimedByOther(c pipeline.Commit, d *pipeline.Dispatch, bySeq map[int]*pipeline.Dispatch) bool {
	if d.Task != nil || len(at.taskNumbers(c)) == 0 {
		return false
	}
	for _, seq := range at.InFlight[d.Seq] {
		if e := bySeq[seq]; e != nil && e != d && e.Task != nil && at.namesTask(c, *e.Task) {
			return true
		}
	}
	return false
}

// namesOtherTask reports whether c's message names a task number and d has a task
// that it does not name: such a commit belongs to another task's dispatch.
func (at *Attribution) namesOtherTask(c pipeline.Commit, d *pipeline.Dispatch) bool {
	if d.Task == nil || len(at.taskNumbers(c)) == 0 {
		return false
	}
	return !at.namesTask(c, *d.Task)
}

// namesTask reports whether c's message names task n (see taskNumbersOf), reading
// the message's task numbers through the memo of taskNumbers.
func (at *Attribution) namesTask(c pipeline.Commit, n int) bool {
	return slices.Contains(at.taskNumbers(c), strconv.Itoa(n))
}

// taskNumbers returns the task numbers c's message names (the digits of each match
// of taskWord), read once per commit.
func (at *Attribution) taskNumbers(c pipeline.Commit) []string {
	if ns, ok := at.tasks[c.Hash]; ok {
		return ns
	}
	ns := taskNumbersOf(c.Message)
	at.tasks[c.Hash] = ns
	return ns
}

// partOf reports whether commit c, made after d started, is d's work: attributed to
// it, or attributed to no dispatch and not naming another task.
func (v *verifier) partOf(c pipeline.Commit, d *pipeline.Dispatch) bool {
	at := v.attributed()
	if owner, ok := at.Owner[c.Hash]; ok {
		return owner == d.Seq
	}
	if d.Task != nil && at.namesTask(c, *d.Task) {
		return true
	}
	return !at.namesOtherTask(c, d)
}
