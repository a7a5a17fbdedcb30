package pipesim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// attempt is one call of one dispatch: a seq, or one more try on a seq.
type attempt struct {
	Seq           int
	Role          role
	Phase         string
	Inst          int // which of the script's dispatches with this role, phase and task
	Start, End    time.Time
	Outcome       string // completed, failed or error
	Segment       int    // checkpoint slots taken (or planned) before Start
	Prev          *attempt
	SameSeq       bool // a retry recorded as more lines on Prev's seq
	ReplayOf      int  // a retry dispatched by an earlier replay session
	ReplaySession string
	Commits       []*projCommit
	Output        bool // the agent wrote its output file
	Receipt       bool
	NoCommit      bool // completed mutating work that needed no commit
	EmptyOutput   bool // the output file is there but empty (the agent had nothing to say)
	Group         int  // the parallel group it belongs to, in the run's order

	file, body            string
	beforeLine, afterLine string
	// what the crash left
	fileDone, beforeDone, afterDone bool
}

// projCommit is one commit an agent makes in the project.
type projCommit struct {
	At             time.Time
	Msg            string
	Path, Content  string
	Hash           string
	done           bool
	TaskNamed, Own int // the task number the message names (0 none); the task of its author
}

// slot is a checkpoint the orchestrator takes (or was about to take).
type slot struct {
	Reason, Source string
	At             time.Time
	Skipped        bool // never taken: deduplicated, disabled or evicted with the repository
	RowDropped     bool // taken, but its checkpoint-manifest.md row is gone
	PhaseStart     bool // a phase start no checkpoint opens (PhaseBoundaries skills)
	done           bool
	Hash           string
}

type evKind int

const (
	evFile evKind = iota
	evBefore
	evCommit
	evOutput
	evReceipt
	evAfter
	evCheckpoint
	evFragment
)

type event struct {
	At   time.Time
	kind evKind
	a    *attempt
	c    *projCommit
	s    *slot
	frag string
	seq  int
}

// run is one simulated pipeline run before it is written.
type run struct {
	r          *rand.Rand
	sc         script
	sid        string
	start      time.Time
	dd         string // live dispatch dir, no trailing slash
	newFields  bool   // newest dispatch.py fields (model_profile, actual_model)
	hdrUTC     bool   // dispatch headers in UTC rather than local offset
	attempts   []*attempt
	slots      []*slot
	events     []*event
	nextSeq    int
	shapes     map[string]bool
	fragSeqs   []int
	lastMsgIdx int
	crashAt    time.Time
	// insts counts the script's dispatches by role, phase and task, so two
	// parallel investigators (or the implementers of two fix cycles) are two work
	// items while a dispatch and its retries and replays are one.
	insts map[Item]int
	// groups counts the parallel groups dispatched so far; amb are the
	// ambiguities made on purpose (see ambiguity.go).
	groups int
	amb    []*made
}

func secs(r *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo+r.IntN(hi-lo+1)) * time.Second
}

// simulate lays out the whole run (every attempt, commit and checkpoint) as the
// orchestrator would drive it if it never crashed.
func (u *run) simulate() {
	u.nextSeq = 1
	t := u.start.Add(secs(u.r, 30, 90))
	phase := ""
	for i, st := range u.sc.Stages {
		if u.sc.PhaseBoundaries && st.Reason == "" && i > 0 && st.Phase != "" && st.Phase != phase {
			// a phase no checkpoint opens still starts a boundary: a resume
			// with nothing to restore can start there on the disk as it is.
			u.slots = append(u.slots, &slot{Reason: "phase " + st.Phase, Source: u.sc.Skill, At: t, Skipped: true, PhaseStart: true})
		}
		if st.Phase != "" {
			phase = st.Phase
		}
		if st.Reason != "" {
			t = t.Add(secs(u.r, 20, 150))
			s := &slot{Reason: st.Reason, Source: u.sc.Skill, At: t}
			if u.r.IntN(14) == 0 {
				s.Skipped = true
				u.shapes["evicted-checkpoint"] = true
			} else if u.r.IntN(12) == 0 {
				s.RowDropped = true
				u.shapes["checkpoint-row-missing"] = true
			}
			u.slots = append(u.slots, s)
			t = t.Add(secs(u.r, 5, 60))
		}
		for _, g := range st.Groups {
			t = u.group(st, g, t).Add(secs(u.r, 15, 120))
			if u.r.IntN(25) == 0 {
				// a writer crashed mid-line and a later append started on a new
				// line: an interior corrupt line whose seq was never reused.
				u.fragSeqs = append(u.fragSeqs, u.nextSeq)
				frag := fmt.Sprintf(`{"seq":%d,"file":"%d-%s`, u.nextSeq, u.nextSeq, g[0].Name)
				u.events = append(u.events, &event{At: t.Add(-5 * time.Second), kind: evFragment, frag: frag + "\n", seq: u.nextSeq})
				u.nextSeq++
				u.shapes["corrupt-line"] = true
			}
		}
	}
	u.shape()
	for _, a := range u.attempts {
		u.attemptEvents(a)
	}
	for _, s := range u.slots {
		u.events = append(u.events, &event{At: s.At, kind: evCheckpoint, s: s})
	}
	sort.SliceStable(u.events, func(i, j int) bool {
		a, b := u.events[i], u.events[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.kind < b.kind
	})
}

// group dispatches the roles of one parallel group at t, with retries, and
// returns when the last of them ended.
func (u *run) group(st stage, g []role, t time.Time) time.Time {
	var all []*attempt
	u.groups++
	if len(g) > 1 {
		u.shapes["parallel"] = true
	}
	for i, ro := range g {
		start := t.Add(time.Duration(i) * secs(u.r, 0, 2))
		key := Item{Role: ro.Name, Phase: st.Phase, Task: ro.Task}
		inst := u.insts[key]
		u.insts[key]++
		var prev *attempt
		for try := 0; ; try++ {
			a := &attempt{Role: ro, Phase: st.Phase, Inst: inst, Group: u.groups, Start: start, Segment: len(u.slots), Prev: prev}
			lo, hi := 40, 600
			if ro.Class == Mutating {
				lo, hi = 180, 1500
			}
			a.End = start.Add(secs(u.r, lo, hi))
			a.Outcome = "completed"
			if try < 2 && u.r.IntN(9) == 0 {
				a.Outcome = pick(u.r, []string{"failed", "error"})
				u.shapes["retry"] = true
			}
			if prev != nil {
				switch u.r.IntN(3) {
				case 0:
					a.SameSeq = true
				case 1:
					a.ReplaySession = fmt.Sprint(u.start.Unix() + int64(u.r.IntN(3000)))
					u.shapes["replay-of"] = true
				}
			}
			u.outcomeDetails(a)
			all = append(all, a)
			if a.Outcome == "completed" {
				break
			}
			prev = a
			start = a.End.Add(secs(u.r, 10, 90))
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Start.Before(all[j].Start) })
	end := t
	for _, a := range all {
		if a.SameSeq {
			a.Seq = a.Prev.Seq
		} else {
			a.Seq = u.nextSeq
			u.nextSeq++
		}
		if a.ReplaySession != "" {
			a.ReplayOf = a.Prev.Seq
		}
		if a.End.After(end) {
			end = a.End
		}
		u.attempts = append(u.attempts, a)
	}
	return end
}

// outcomeDetails decides what an attempt leaves behind: commits, output file,
// receipt.
func (u *run) outcomeDetails(a *attempt) {
	switch a.Role.Class {
	case Mutating:
		n := 0
		switch {
		case a.Outcome == "completed":
			n = 1 + u.r.IntN(4)/3
		case u.r.IntN(4) == 0:
			n = 1 // partial work of a failed attempt
		}
		span := a.End.Sub(a.Start)
		for i := 0; i < n; i++ {
			at := a.Start.Add(time.Duration(float64(span) * (0.3 + 0.65*float64(i+1)/float64(n+1))))
			at = at.Truncate(time.Second)
			a.Commits = append(a.Commits, u.commitFor(a, at, a.Outcome != "completed"))
		}
	case Output:
		a.Output = a.Outcome == "completed" && u.r.IntN(14) != 0
		a.Receipt = a.Outcome == "completed" && u.r.IntN(2) == 0
		if a.Outcome == "completed" && !a.Output {
			u.shapes["missing-output"] = true
		}
	}
}

// commitFor writes the message and file of one commit of a.
func (u *run) commitFor(a *attempt, at time.Time, partial bool) *projCommit {
	c := &projCommit{At: at, Own: a.Role.Task}
	words := strings.Fields(strings.TrimSuffix(strings.SplitN(a.Role.Desc, ": ", 2)[len(strings.SplitN(a.Role.Desc, ": ", 2))-1], "."))
	short := strings.Join(words[:min(len(words), 4)], " ")
	prefix := "feat"
	if partial {
		prefix = "wip"
	}
	switch {
	case a.Role.Task > 0:
		switch u.r.IntN(10) {
		case 0, 1, 2, 3:
			c.Msg = fmt.Sprintf("%s: task %d %s", prefix, a.Role.Task, strings.ToLower(short))
			c.TaskNamed = a.Role.Task
		case 4:
			// misleading: the words of another task.
			other := pick(u.r, taskTexts)
			c.Msg = fmt.Sprintf("%s: %s", prefix, strings.Join(strings.Fields(other)[:3], " "))
			u.shapes["misleading-message"] = true
		default:
			c.Msg = fmt.Sprintf("%s: implement %s", prefix, strings.ToLower(strings.Join(words[min(len(words), 3):min(len(words), 6)], " ")))
			u.shapes["taskless-message"] = true
		}
		c.Path = fmt.Sprintf("billing/task%d.go", a.Role.Task)
	default:
		c.Msg = fmt.Sprintf("%s(%s): %s", prefix, a.Role.Name, strings.ToLower(short))
		c.Path = fmt.Sprintf("work/%s.md", a.Role.Name)
	}
	u.lastMsgIdx++
	c.Content = fmt.Sprintf("// %s (commit %d of session %s)\n", c.Msg, u.lastMsgIdx, u.sid)
	return c
}

// attemptEvents lays out a's writes: dispatch file and dispatched line at its
// start, commits, output file, receipt and completion line at its end.
func (u *run) attemptEvents(a *attempt) {
	a.file = fmt.Sprintf("%d-%s.md", a.Seq, a.Role.Name)
	a.body = u.dispatchBody(a)
	a.beforeLine = u.beforeLine(a)
	a.afterLine = u.afterLine(a)
	u.events = append(u.events, &event{At: a.Start, kind: evFile, a: a}, &event{At: a.Start, kind: evBefore, a: a})
	for _, c := range a.Commits {
		u.events = append(u.events, &event{At: c.At, kind: evCommit, a: a, c: c})
	}
	if a.Output {
		u.events = append(u.events, &event{At: a.End.Add(-2 * time.Second), kind: evOutput, a: a})
	}
	if a.Receipt {
		u.events = append(u.events, &event{At: a.End, kind: evReceipt, a: a})
	}
	u.events = append(u.events, &event{At: a.End, kind: evAfter, a: a})
}

func (u *run) stamp(t time.Time) string {
	if u.hdrUTC {
		return t.UTC().Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05-07:00")
}

func nullable(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// dispatchBody is the dispatch file: the 4-line audit header, a blank line,
// "---", the template text and the injected context.
func (u *run) dispatchBody(a *attempt) string {
	task := "null"
	if a.Role.Task > 0 {
		task = fmt.Sprint(a.Role.Task)
	}
	var ask string
	switch a.Role.Class {
	case Mutating:
		ask = "Commit your work to the project with a message that describes the change."
	case Output:
		ask = fmt.Sprintf("Write your findings to %d-%s-output.md beside this dispatch file.", a.Seq, a.Role.Name)
	default:
		ask = "Answer in the conversation. Do not write files."
	}
	return fmt.Sprintf("# Dispatch: %s\n**Pipeline:** %s | **Phase:** %s | **Task:** %s\n**Timestamp:** %s\n**Dispatch-Dir:** %s/\n\n---\nYou are the %s. %s\n\n## Context\n%s\n",
		a.Role.Name, u.sc.Skill, nullable(a.Phase), task, u.stamp(a.Start), u.dd, a.Role.Name, ask, a.Role.Desc)
}

func profileOf(tier string) any {
	switch tier {
	case "opus":
		return "high"
	case "sonnet", "standard":
		return "standard"
	case "haiku":
		return "fast"
	}
	return nil
}

func (u *run) head(a *attempt, status string) []field {
	var phase, task any
	if a.Phase != "" {
		phase = a.Phase
	}
	if a.Role.Task > 0 {
		task = a.Role.Task
	}
	return []field{{"seq", a.Seq}, {"file", a.file}, {"role", a.Role.Name}, {"phase", phase}, {"task", task}, {"status", status}}
}

func (u *run) tail(a *attempt, fs []field, toolCalls any) []field {
	fs = append(fs, field{"model_tier", a.Role.Tier})
	if u.newFields {
		fs = append(fs, field{"model_profile", profileOf(a.Role.Tier)})
	}
	return append(fs, field{"tool_calls", toolCalls})
}

func (u *run) replayFields(a *attempt, fs []field) []field {
	if a.ReplaySession == "" {
		return fs
	}
	return append(fs, field{"replay_of", a.ReplayOf}, field{"replay_session", a.ReplaySession}, field{"mutation", nil})
}

// beforeLine is `dispatch.py before`'s entry (or, for a retry an earlier replay
// session dispatched, replay's own entry with its replay fields).
func (u *run) beforeLine(a *attempt) string {
	fs := u.head(a, "dispatched")
	fs = append(fs, field{"duration_s", nil}, field{"summary", nil}, field{"input_chars", pyLen(a.body)}, field{"output_chars", nil})
	fs = u.tail(a, fs, nil)
	return fitLine(u.replayFields(a, fs)) + "\n"
}

// afterLine is `dispatch.py after`'s entry: the dispatched entry's context
// fields copied, the outcome added.
func (u *run) afterLine(a *attempt) string {
	fs := u.head(a, a.Outcome)
	var outChars, tools any
	summary := u.summary(a)
	if a.Outcome == "completed" {
		outChars, tools = 800+u.r.IntN(9000), 3+u.r.IntN(60)
	}
	fs = append(fs, field{"duration_s", int(a.End.Sub(a.Start) / time.Second)}, field{"summary", summary}, field{"input_chars", pyLen(a.body)}, field{"output_chars", outChars})
	fs = u.tail(a, fs, tools)
	if u.newFields {
		fs = append(fs, field{"actual_model", pick(u.r, []any{"claude-opus-4-6", "claude-sonnet-4-6", nil})})
	}
	return fitLine(u.replayFields(a, fs)) + "\n"
}

func (u *run) summary(a *attempt) string {
	switch {
	case a.Outcome == "error":
		return "agent timed out"
	case a.Outcome == "failed":
		return "tests still failing after 3 attempts"
	case u.r.IntN(30) == 0:
		u.shapes["long-summary"] = true
		return strings.Repeat("Résumé of findings — ", 300)
	case a.Role.Task > 0:
		return fmt.Sprintf("Task %d done, %d tests", a.Role.Task, 1+u.r.IntN(9))
	}
	return fmt.Sprintf("%s finished", a.Role.Name)
}
