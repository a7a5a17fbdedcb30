package pipesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// xKind is one kind of orchestrator event.
type xKind int

const (
	xMarker xKind = iota // .pipeline-active and .dispatch-active-<sid>
	xCkpt                // the shadow commit of a checkpoint
	xRow                 // its checkpoint-manifest.md row
	xFile                // a dispatch file
	xBefore              // dispatch.py before: the dispatched line
	xStep                // one step of the agent's work
	xAfter               // dispatch.py after: the completion line
)

// xev is one event; a crash is a cut of the event list, the cut event torn at
// a fraction of its bytes where it writes.
type xev struct {
	kind   xKind
	u      *XUnit
	seq    int
	fail   bool
	step   int
	at     time.Time // the event's time
	start  time.Time // the dispatch's start (its header)
	reason string
	sc     *XScenario // the session whose event it is, nil the run's own
}

// xLayout is where one run lives.
type xLayout struct {
	root, project, home, tmp, scratch, shadow, dd string
}

func newXLayout(root, sid string) xLayout {
	L := xLayout{root: root, project: filepath.Join(root, "project"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	sum := sha256.Sum256([]byte(L.project))
	h := hex.EncodeToString(sum[:])[:16]
	L.scratch = filepath.Join(L.home, ".claude", "projects", h, "memory")
	L.shadow = filepath.Join(L.home, ".claude", "projects", h, "checkpoints", h)
	L.dd = filepath.Join(L.tmp, "crucible-dispatch-"+sid)
	return L
}

// xOrch lays out one orchestrator session's events: the original run, or the
// skill continuing from replay's hand-off.
type xOrch struct {
	s       *XScenario
	r       *rand.Rand
	t       time.Time
	nextSeq int
	events  []xev
}

func (o *xOrch) tick(lo, hi int) time.Time {
	o.t = o.t.Add(time.Duration(lo+o.r.IntN(hi-lo+1)) * time.Second)
	return o.t
}

// groups lays out the units of groups from..end that run (run[i] true), a
// checkpoint before each group whose units all run.
func (o *xOrch) groups(from int, run map[int]bool) {
	for gi := from; gi < len(o.s.Groups); gi++ {
		g := o.s.Groups[gi]
		var units []*XUnit
		all := true
		for _, ui := range g.Units {
			if run[ui] {
				units = append(units, &o.s.Units[ui])
			} else {
				all = false
			}
		}
		if len(units) == 0 {
			continue
		}
		if g.Reason != "" && all {
			at := o.tick(20, 150)
			o.events = append(o.events, xev{kind: xCkpt, at: at, reason: g.Reason}, xev{kind: xRow, at: at, reason: g.Reason})
			o.tick(5, 60)
		}
		// every unit's first attempt is dispatched, then the agents work and
		// complete in an order of their own; a failed attempt is retried on a
		// new seq.
		type att struct {
			u     *XUnit
			seq   int
			start time.Time
			fail  bool
		}
		var first []att
		for _, u := range units {
			a := att{u: u, seq: o.nextSeq, start: o.tick(0, 3), fail: u.Fails > 0}
			o.nextSeq++
			o.events = append(o.events, xev{kind: xFile, u: u, seq: a.seq, start: a.start, at: a.start}, xev{kind: xBefore, u: u, seq: a.seq, start: a.start, at: a.start})
			first = append(first, a)
		}
		for _, i := range o.r.Perm(len(first)) {
			a := first[i]
			for {
				for k := 1; k <= XAgentSteps(a.u, a.fail); k++ {
					o.events = append(o.events, xev{kind: xStep, u: a.u, seq: a.seq, fail: a.fail, step: k, start: a.start, at: o.tick(30, 200)})
				}
				o.events = append(o.events, xev{kind: xAfter, u: a.u, seq: a.seq, fail: a.fail, start: a.start, at: o.tick(2, 20)})
				if !a.fail {
					break
				}
				a = att{u: a.u, seq: o.nextSeq, start: o.tick(10, 60)}
				o.nextSeq++
				o.events = append(o.events, xev{kind: xFile, u: a.u, seq: a.seq, start: a.start, at: a.start}, xev{kind: xBefore, u: a.u, seq: a.seq, start: a.start, at: a.start})
			}
		}
		o.tick(15, 120)
	}
}

// xApply performs e on the run at L; frac > 0 tears it (a crash during it).
func (s *XScenario) xApply(L xLayout, e xev, frac float64) error {
	if e.sc != nil && e.sc != s {
		// another session's event, in its own dispatch dir
		return e.sc.xApply(newXLayout(L.root, e.sc.Sid), e, frac)
	}
	if err := s.xStateAt(L, e); err != nil {
		return err
	}
	cut := func(text string) string {
		if frac > 0 {
			return text[:int(float64(len(text))*frac)]
		}
		return text
	}
	switch e.kind {
	case xMarker:
		if frac > 0 {
			return nil
		}
		if err := os.MkdirAll(L.scratch, 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(L.dd, 0o755); err != nil {
			return err
		}
		subjects, _, err := xHistory(L.project)
		if err != nil {
			return err
		}
		_ = subjects
		text := fmt.Sprintf(`{"pipeline_id": "%s", "skill": "%s", "phase": "%s", "start_time": "%s", "scratch_dir": "%s", "dispatch_dir": "%s/", "branch": "%s", "baseline_sha": "%s"}`+"\n",
			s.Sid, s.Skill, s.Units[0].Phase, s.Start.Format("2006-01-02T15:04:05-07:00"), L.scratch, L.dd, s.Branch, xHeadHash(L.project))
		if !s.second { // .pipeline-active names the first session only
			if err := xWriteFile(filepath.Join(L.scratch, ".pipeline-active"), []byte(text), 0o644); err != nil {
				return err
			}
		}
		return xWriteFile(filepath.Join(L.scratch, ".dispatch-active-"+s.Sid), []byte(fmt.Sprintf("dispatch-dir: %s/\nseq: 0\n", L.dd)), 0o644)
	case xCkpt:
		if frac > 0 {
			return nil // git writes the commit's objects before its ref: a cut one is not there
		}
		_, err := xCheckpoint(L.shadow, L.project, fmt.Sprintf("%s | %s | %s", e.reason, localStamp(e.at), s.Skill), e.at)
		return err
	case xRow:
		h, err := xShadowHead(L.shadow)
		if err != nil {
			return err
		}
		return xAppend(filepath.Join(L.shadow, "checkpoint-manifest.md"), cut(fmt.Sprintf("| %s | %s | %s | %s |\n", h[:8], localStamp(e.at), e.reason, s.Skill)))
	case xFile:
		// torn where the same fraction of the body with the dispatch dir as a
		// fixed-width placeholder ends, so the tear does not depend on where
		// the run lives
		body := s.xBody(L, e)
		if frac > 0 {
			const ph = "\x00DD\x00"
			norm := strings.Replace(body, L.dd, ph, 1)
			n := int(float64(len(norm)) * frac)
			if i := strings.Index(norm, ph); i >= 0 && n > i && n < i+len(ph) {
				n = i
			}
			body = strings.Replace(norm[:n], ph, L.dd, 1)
		}
		return xWriteFile(filepath.Join(L.dd, fmt.Sprintf("%d-%s.md", e.seq, e.u.Role)), []byte(body), 0o644)
	case xBefore:
		return xAppend(filepath.Join(L.dd, "manifest.jsonl"), cut(s.xLine(L, e, "dispatched")))
	case xAfter:
		status := "completed"
		if e.fail {
			status = pick(rand.New(rand.NewPCG(uint64(e.seq), 7)), []string{"failed", "error"})
		}
		return xAppend(filepath.Join(L.dd, "manifest.jsonl"), cut(s.xLine(L, e, status)))
	case xStep:
		return XAgent(L.project, L.dd, e.u, e.seq, e.at, e.fail, e.step, e.step-boolInt(frac > 0), frac)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func xAppend(path, text string) error {
	return xAppendFile(path, []byte(text), 0o644)
}

// xBody is the dispatch file: the 4-line audit header, "---", the template
// text and the injected context.
func (s *XScenario) xBody(L xLayout, e xev) string {
	task := "null"
	if e.u.Task > 0 {
		task = fmt.Sprint(e.u.Task)
	}
	var ask string
	switch e.u.Class {
	case Mutating:
		ask = "Commit your work to the project with a message that describes the change."
	case Output:
		ask = fmt.Sprintf("Write your findings to %d-%s-output.md beside this dispatch file.", e.seq, e.u.Role)
	default:
		ask = "Answer in the conversation. Do not write files."
	}
	return fmt.Sprintf("# Dispatch: %s\n**Pipeline:** %s | **Phase:** %s | **Task:** %s\n**Timestamp:** %s\n**Dispatch-Dir:** %s/\n\n---\nYou are the %s. %s\n\n## Context\n%s\n",
		e.u.Role, s.Skill, e.u.Phase, task, e.start.Format("2006-01-02T15:04:05-07:00"), L.dd, e.u.Role, ask, e.u.Desc)
}

// xLine is dispatch.py's manifest entry for e with status.
func (s *XScenario) xLine(L xLayout, e xev, status string) string {
	var task any
	if e.u.Task > 0 {
		task = e.u.Task
	}
	fs := []field{{"seq", e.seq}, {"file", fmt.Sprintf("%d-%s.md", e.seq, e.u.Role)}, {"role", e.u.Role}, {"phase", e.u.Phase}, {"task", task}, {"status", status}}
	inChars := pyLen(s.xBody(L, e))
	if status == "dispatched" {
		fs = append(fs, field{"duration_s", nil}, field{"summary", nil}, field{"input_chars", inChars}, field{"output_chars", nil}, field{"model_tier", e.u.Tier}, field{"tool_calls", nil})
	} else {
		var out, tools any
		summary := "agent timed out"
		if status == "failed" {
			summary = "tests still failing after 3 attempts"
		}
		if status == "completed" {
			out, tools, summary = 900+e.seq*17, 3+e.seq%40, e.u.ID+" done"
		}
		fs = append(fs, field{"duration_s", int(e.at.Sub(e.start) / time.Second)}, field{"summary", summary}, field{"input_chars", inChars}, field{"output_chars", out}, field{"model_tier", e.u.Tier}, field{"tool_calls", tools})
	}
	return fitLine(fs) + "\n"
}

func xHeadHash(project string) string {
	data, err := xReadFile(filepath.Join(project, ".git", "HEAD"))
	if err != nil {
		return ""
	}
	ref := string(data)
	if len(ref) > 5 && ref[:5] == "ref: " {
		data, err = xReadFile(filepath.Join(project, ".git", ref[5:len(ref)-1]))
		if err != nil {
			return ""
		}
	}
	if len(data) < 40 {
		return ""
	}
	return string(data[:40])
}

func xShadowHead(shadow string) (string, error) {
	data, err := xReadFile(filepath.Join(shadow, "refs", "heads", "master"))
	if err != nil || len(data) < 40 {
		return "", fmt.Errorf("shadow repository %s has no checkpoint: %v", shadow, err)
	}
	return string(data[:40]), nil
}
