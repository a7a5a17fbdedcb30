package resume

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// Verdict is the result of one verification check.
type Verdict struct {
	OK     bool
	Check  string
	Detail string
}

// unknownWindowEnd bounds the commit window of a dispatch whose duration is unknown
// when no later boundary checkpoint bounds it first.
const unknownWindowEnd = 6 * time.Hour

type verifier struct {
	profile  *templates.Profile
	log      pipeline.CommitLog
	evidence pipeline.Evidence
	// marks are the times of the boundary checkpoints, ascending: a dispatch's work
	// is done before the next boundary's checkpoint is taken.
	marks []time.Time
	cache map[int]Verdict
	warn  func(string)
	// dispatches and describe feed the commit attribution, made once on first use.
	dispatches  []*pipeline.Dispatch
	describe    func(*pipeline.Dispatch) string
	attribution *Attribution
	// superseded reports an attempt a later attempt at the same work replaced: it
	// is given no commit; nil when nothing is.
	superseded func(*pipeline.Dispatch) bool
	// asks reads what a dispatch file asks for (pipeline.Pipeline.Asks); nil
	// when unknown.
	asks func(*pipeline.Dispatch) pipeline.Ask
	// others are the dispatches of the project's other sessions and now the
	// end of their open windows: a commit one of them claims with more words
	// is no candidate of this run's dispatches (othersWordier).
	others []pipeline.OtherDispatch
	now    time.Time
}

// askOf is what d's dispatch file asks for; AskUnknown without a reader.
func (v *verifier) askOf(d *pipeline.Dispatch) pipeline.Ask {
	if v.asks == nil {
		return pipeline.AskUnknown
	}
	return v.asks(d)
}

// attributed returns the commit attribution of the pipeline's mutating dispatches.
func (v *verifier) attributed() *Attribution {
	if v.attribution == nil {
		v.attribution = v.attribute(v.dispatches, v.describe)
	}
	return v.attribution
}

// windowEnd returns the end of d's commit window: its header time plus duration, or
// when the duration is unknown the next boundary checkpoint after it.
func (v *verifier) windowEnd(d *pipeline.Dispatch) time.Time {
	if end, ok := d.End(); ok {
		return end
	}
	for _, m := range v.marks {
		if m.After(d.Time) {
			return m
		}
	}
	return d.Time.Add(unknownWindowEnd)
}

// verify checks the artifacts of a completed dispatch by its role class.
func (v *verifier) verify(d *pipeline.Dispatch) Verdict {
	if got, ok := v.cache[d.Seq]; ok {
		return got
	}
	var out Verdict
	switch d.Class {
	case templates.RoleMutating:
		out = v.guessed(d, v.commitCheck(d))
	case templates.RoleOutput:
		out = v.guessed(d, v.outputCheck(d))
	case templates.RoleNonArtifact:
		out = Verdict{OK: true, Check: "none", Detail: "role produces no artifact"}
	default:
		out = v.unknownCheck(d)
	}
	v.cache[d.Seq] = out
	return out
}

// guessed weighs a failed check of a role whose class a generic profile only
// guessed from its name against what the dispatch file asks for: the file is the
// stronger evidence. One that asks for no file and no commit makes the dispatch
// conversation-only, as it does for a role no profile names (a "synthesis" that
// answers in the conversation); one that asks for something, or is gone, keeps the
// failure. A class a profile states is never second-guessed.
func (v *verifier) guessed(d *pipeline.Dispatch, out Verdict) Verdict {
	if out.OK || !v.profile.Generic || v.askOf(d) != pipeline.AskNothing {
		return out
	}
	v.say(fmt.Sprintf("role %q of seq %d: its name suggests %s, but its dispatch file asks for no file and no commit and none was found: taken as conversation-only, not verified; pin its class with --profile FILE (roles.mutating, roles.output or roles.non_artifact)", d.Role, d.Seq, d.Class))
	return Verdict{OK: true, Check: "none (conversation-only, " + out.Check + " not asked for)", Detail: "its dispatch file asks for no file and no commit, and none was found"}
}

// unknownCheck verifies a dispatch of a role the profile does not name by the
// evidence present and by what its dispatch file asks for: an output file, a
// receipt or an attributed commit verifies it; with none, a dispatch file that asks
// for no file and no commit makes it conversation-only (nothing to verify), and
// one that asks for a file or a commit, or is gone, fails. A warning names the role
// and how to pin its class.
func (v *verifier) unknownCheck(d *pipeline.Dispatch) Verdict {
	pin := "pin its class with --profile FILE (roles.mutating, roles.output or roles.non_artifact)"
	out := v.outputCheck(d)
	if !out.OK {
		if c := v.commitCheck(d); c.OK {
			out = c
		}
	}
	if out.OK {
		out.Check = "any evidence (unknown role)"
		v.say(fmt.Sprintf("role %q of seq %d is not in the %s profile; verified by any evidence (%s); %s", d.Role, d.Seq, v.profile.Skill, out.Detail, pin))
		return out
	}
	switch v.askOf(d) {
	case pipeline.AskNothing:
		v.say(fmt.Sprintf("role %q of seq %d is not in the %s profile; its dispatch file asks for no file and no commit and none was found: taken as conversation-only, not verified; %s", d.Role, d.Seq, v.profile.Skill, pin))
		return Verdict{OK: true, Check: "none (unknown role, conversation-only)", Detail: "its dispatch file asks for no file and no commit, and none was found"}
	case pipeline.AskCommit:
		out.Detail = "its dispatch file asks for a commit: " + v.commitCheck(d).Detail
	case pipeline.AskFile:
		out.Detail = "its dispatch file asks for a file: " + out.Detail
	}
	out.Check = "any evidence (unknown role)"
	v.say(fmt.Sprintf("role %q of seq %d is not in the %s profile; verified by any evidence, and none was found; %s", d.Role, d.Seq, v.profile.Skill, pin))
	return out
}

func (v *verifier) say(msg string) {
	if v.warn != nil {
		v.warn(msg)
	}
}

func (v *verifier) commitCheck(d *pipeline.Dispatch) Verdict {
	check := "commit in window attributed to it"
	if d.Task != nil {
		check = fmt.Sprintf("commit in window attributed to task %d", *d.Task)
	}
	if !v.hasWindow(d) {
		return Verdict{Check: check, Detail: "no dispatch timestamp (dispatch file missing), and no manifest line around it that bounds its commit window"}
	}
	if v.log == nil {
		return Verdict{Check: check, Detail: "no project repository to search"}
	}
	at := v.attributed()
	if at.Err != nil {
		return Verdict{Check: check, Detail: "cannot read the project history: " + at.Err.Error()}
	}
	if got, ok := at.Assigned[d.Seq]; ok {
		return Verdict{OK: true, Check: check, Detail: fmt.Sprintf("%s %q (%s)", short(got.Commit.Hash), got.Commit.Subject(), got.Why)}
	}
	w := at.Windows[d.Seq]
	window := fmt.Sprintf("%s..%s", report.Time(w[0]), report.Time(w[1]))
	commits := at.Candidates[d.Seq]
	if len(commits) == 0 {
		return Verdict{Check: check, Detail: "no project commit in " + window}
	}
	var owners []string
	for _, c := range commits {
		if seq, ok := at.Owner[c.Hash]; ok {
			owners = append(owners, fmt.Sprintf("%s went to seq %d", short(c.Hash), seq))
		}
	}
	inFlight := report.Count(len(at.InFlight[d.Seq]), "mutating dispatch")
	detail := fmt.Sprintf("%s in %s for %s in flight; none names its task or shares words with it", report.Count(len(commits), "commit"), window, inFlight)
	if d.Task != nil {
		detail = fmt.Sprintf("%s in %s for %s in flight; none names task %d or shares words with it", report.Count(len(commits), "commit"), window, inFlight, *d.Task)
	}
	if len(owners) > 0 {
		detail += " (" + strings.Join(owners, ", ") + ")"
	}
	return Verdict{Check: check, Detail: detail}
}

func (v *verifier) outputCheck(d *pipeline.Dispatch) Verdict {
	check := "output file or receipt"
	if files := v.evidence.Outputs[d.Seq]; len(files) > 0 {
		return Verdict{OK: true, Check: check, Detail: "output " + strings.Join(files, ", ")}
	}
	if ids := v.evidence.Receipts[d.Seq]; len(ids) > 0 {
		return Verdict{OK: true, Check: check, Detail: "receipt " + strings.Join(ids, ", ")}
	}
	return Verdict{Check: check, Detail: fmt.Sprintf("no %d-* output file beside the dispatch file and no receipt in receipt-ledger.jsonl", d.Seq)}
}

var taskWord = regexp.MustCompile(`(?i)\btask[\s#_-]*(\d+)\b`)

// taskNumbersOf returns the task numbers msg names, as written (the digits of each
// match of taskWord). A message names task n when one of them is n as a whole
// number: "task 1" names 1 but not 10.
func taskNumbersOf(msg string) []string {
	var out []string
	for _, m := range taskWord.FindAllStringSubmatch(msg, -1) {
		out = append(out, m[1])
	}
	return out
}

func short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}
