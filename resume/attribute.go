package resume

import (
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
// dispatches whose time windows hold them. The strongest evidence wins: the task
// number in the commit message, then words shared with the task's description, then
// any unassigned commit in the window when the window holds at least as many commits
// as mutating dispatches were in flight in it. No commit counts for two dispatches.
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
	// Why names the evidence: "names task 2", "shares words: login, form", or
	// "unassigned commit in the window (2 commits, 2 dispatches in flight)".
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
		if d.Recorded && !d.Time.IsZero() && (d.Class == templates.RoleMutating || d.Class == templates.RoleUnknown) {
			mut = append(mut, d)
		}
	}
	n := len(mut) // size hints: the maps hold about one entry per mutating dispatch
	at := &Attribution{Assigned: make(map[int]AttributedCommit, n), Owner: make(map[string]int, n), Candidates: make(map[int][]pipeline.Commit, n),
		InFlight: make(map[int][]int, n), Windows: make(map[int][2]time.Time, n), tasks: make(map[string][]string, n)}
	tol := time.Duration(v.profile.CommitWindowToleranceS) * time.Second
	for _, d := range mut {
		at.Windows[d.Seq] = [2]time.Time{d.Time.Add(-tol), v.windowEnd(d).Add(tol)}
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
	at.byTaskNumber(mut)
	at.byWords(mut, describe)
	at.byElimination(mut)
	return at
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

// byTaskNumber gives each dispatch with a task the oldest free commit of its window
// that names that task.
func (at *Attribution) byTaskNumber(mut []*pipeline.Dispatch) {
	for _, d := range mut {
		if d.Task == nil {
			continue
		}
		for _, c := range at.Candidates[d.Seq] {
			if _, taken := at.Owner[c.Hash]; !taken && at.namesTask(c, *d.Task) {
				at.give(d, c, fmt.Sprintf("names task %d", *d.Task))
				break
			}
		}
	}
}

// byWords pairs the remaining dispatches and commits by the words a commit message
// shares with the dispatch's task description, most shared words first.
func (at *Attribution) byWords(mut []*pipeline.Dispatch, describe func(*pipeline.Dispatch) string) {
	if describe == nil {
		return
	}
	type pair struct {
		d      *pipeline.Dispatch
		c      pipeline.Commit
		shared []string
	}
	var pairs []pair
	for _, d := range mut {
		if _, done := at.Assigned[d.Seq]; done {
			continue
		}
		desc := wordsOf(describe(d))
		if len(desc) == 0 {
			continue
		}
		for _, c := range at.Candidates[d.Seq] {
			if _, taken := at.Owner[c.Hash]; taken || at.namesOtherTask(c, d) {
				continue
			}
			if s := sharedWords(desc, c.Message); len(s) > 0 {
				pairs = append(pairs, pair{d, c, s})
			}
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if len(pairs[i].shared) != len(pairs[j].shared) {
			return len(pairs[i].shared) > len(pairs[j].shared)
		}
		if pairs[i].d.Seq != pairs[j].d.Seq {
			return pairs[i].d.Seq < pairs[j].d.Seq
		}
		return pairs[i].c.Time.Before(pairs[j].c.Time)
	})
	for _, p := range pairs {
		if _, done := at.Assigned[p.d.Seq]; done {
			continue
		}
		if _, taken := at.Owner[p.c.Hash]; taken {
			continue
		}
		at.give(p.d, p.c, "shares words with its task: "+strings.Join(p.shared, ", "))
	}
}

// byElimination gives a dispatch still without a commit the oldest free commit of its
// window, when the window holds at least as many commits as mutating dispatches were
// in flight in it; the dispatches with the fewest free commits choose first.
func (at *Attribution) byElimination(mut []*pipeline.Dispatch) {
	free := func(d *pipeline.Dispatch) []pipeline.Commit {
		var out []pipeline.Commit
		for _, c := range at.Candidates[d.Seq] {
			if _, taken := at.Owner[c.Hash]; !taken && !at.namesOtherTask(c, d) {
				out = append(out, c)
			}
		}
		return out
	}
	for {
		var pick *pipeline.Dispatch
		var pickFree []pipeline.Commit
		for _, d := range mut {
			if _, done := at.Assigned[d.Seq]; done {
				continue
			}
			if len(at.Candidates[d.Seq]) < len(at.InFlight[d.Seq]) {
				continue
			}
			f := free(d)
			if len(f) == 0 {
				continue
			}
			if pick == nil || len(f) < len(pickFree) {
				pick, pickFree = d, f
			}
		}
		if pick == nil {
			return
		}
		at.give(pick, pickFree[0], fmt.Sprintf("unassigned commit in its window (%s, %s in flight)",
			report.Count(len(at.Candidates[pick.Seq]), "commit"), report.Count(len(at.InFlight[pick.Seq]), "mutating dispatch")))
	}
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
