package inproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/exitkinds"
	"github.com/replaytool/replay/internal/testkit/pipesim"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/resumeflow"
)

// Replay returns the in-process equivalent of the replay binary for
// pipesim.XRunSeed (its XOptions.Replay): `replay --yes --json --agent <sim>`
// and `replay plan --json`, both with --now, run through the product's resume
// use case (resumeflow.Run, resumeflow.Decide) with the Request and Deps
// cmd/replay builds from those flags, and answered with the JSON the driver
// reads. sysTmp is the system temporary root the binary would get as
// $REPLAY_SYSTEM_TMP.
//
// The session dying during a re-dispatch (XCall.Kill) is a kill of the whole
// run directory's writer: once the killed agent call has done its part of the
// work, the run directory (the common parent of the project, $HOME and
// $TMPDIR) is moved aside, so nothing replay does after that instant reaches
// it, and put back when replay returns; whatever replay wrote in the meantime
// is dropped, as a killed process never writes it.
func Replay(sysTmp string) func(pipesim.XCall) pipesim.XReplayResult {
	return func(c pipesim.XCall) pipesim.XReplayResult {
		if c.Plan {
			return planCall(c, sysTmp)
		}
		return resumeCall(c, sysTmp)
	}
}

// deps are the use case's dependencies for c: its directories, the fixed
// clock of --now, no one to ask (stdin is no terminal), warnings and the log
// into log.
func deps(c pipesim.XCall, sysTmp string, log *strings.Builder) resumeflow.Deps {
	return resumeflow.Deps{
		Env: resumeflow.Env{Home: c.Home, Tmp: c.Tmp, SysTmp: sysTmp, Cwd: c.Dir},
		Now: func() time.Time { return c.Now }, NoPrompt: "stdin is not a terminal",
		Printer: printer{log}, Log: log,
	}
}

// printer writes the use case's warnings as the binary writes them on stderr.
type printer struct{ w *strings.Builder }

func (p printer) Warnf(format string, args ...any) {
	fmt.Fprintf(p.w, "replay: warning: "+format+"\n", args...)
}
func (p printer) Infof(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }
func (p printer) Verbosef(string, ...any)          {}

// planCall is `replay plan --json --now T`: the plan and the preflight.
func planCall(c pipesim.XCall, sysTmp string) pipesim.XReplayResult {
	var log strings.Builder
	a, _, err := resumeflow.Decide(resumeflow.Locate{Path: pathArg(c.Args)}, nil, deps(c, sysTmp, &log))
	if err != nil {
		return failed(err)
	}
	plan := resume.BuildPlan(a, nil)
	pf := resume.RunPreflight(a, resume.PreflightOptions{Confirm: true})
	plan.Preflight = pf.Lines
	out, jerr := json.Marshal(plan)
	if jerr != nil {
		return failed(jerr)
	}
	res := failed(pf.Err)
	res.Stdout = string(out)
	return res
}

// resumeCall is `replay --yes --json --agent <sim> --now T`.
func resumeCall(c pipesim.XCall, sysTmp string) pipesim.XReplayResult {
	var log strings.Builder
	run, err := runDir(c)
	if err != nil {
		return failed(err)
	}
	aside := run + ".killed"
	ag := &simAgent{s: c.Scenario, kill: c.Kill, die: func() error { return os.Rename(run, aside) }}
	d := deps(c, sysTmp, &log)
	d.Agent = ag
	var rk *restoreKill
	if c.RestoreKill != nil {
		rk = &restoreKill{XRestoreKill: *c.RestoreKill, project: c.Dir, die: ag.die}
		d.Fault = rk.fault
	}
	req := resumeflow.Request{Locate: resumeflow.Locate{Path: pathArg(c.Args)}, Yes: true, Jobs: 1, Timeout: 30 * time.Minute, Reuse: agent.ReuseExact, Templates: flagValue(c.Args, "--templates")}
	res, err := resumeflow.Run(context.Background(), req, d)
	if rk != nil && rk.err != nil {
		return pipesim.XReplayResult{Code: -1, Stderr: "inproc: " + rk.err.Error()}
	}
	if ag.dead || (rk != nil && rk.dead) {
		// the killed replay's writes after the kill never happened
		rerr := os.RemoveAll(run)
		if rerr == nil {
			rerr = os.Rename(aside, run)
		}
		if rerr != nil {
			return pipesim.XReplayResult{Code: -1, Stderr: "inproc: putting the killed run back: " + rerr.Error()}
		}
		return pipesim.XReplayResult{Killed: true, KilledInRestore: rk != nil && rk.dead, Code: 137, Stderr: log.String()}
	}
	var out string
	if err == nil {
		if out, err = document(res); err == nil {
			err = res.Stopped()
		}
	}
	r := failed(err)
	r.Stdout, r.Stderr = out, log.String()+r.Stderr
	return r
}

// document is what the binary prints on stdout for res with --json.
func document(res *resumeflow.Result) (string, error) {
	a := res.Analysis
	switch {
	case res.Restore == nil:
		return fmt.Sprintf("Every dispatch of session %s completed: nothing to resume.\n", a.Pipeline.Location.SessionID), nil
	case res.Restore.StartedFresh:
		out, err := json.Marshal(map[string]any{"started_fresh": true, "archived": res.Restore.Archived, "session": res.Restore.Session})
		return string(out), err
	}
	type redone struct {
		Seq      int    `json:"seq"`
		ReplayOf int    `json:"replay_of"`
		Role     string `json:"role"`
		Status   string `json:"status"`
		Reused   bool   `json:"reused"`
		Summary  string `json:"summary"`
		Reason   string `json:"reason,omitempty"`
	}
	doc := struct {
		Plan       *report.Plan `json:"plan"`
		Session    string       `json:"session"`
		Redispatch []redone     `json:"redispatch,omitempty"`
	}{Plan: resume.BuildPlan(a, nil), Session: res.Restore.Session}
	if res.Report != nil {
		for _, oc := range res.Report.Outcomes {
			doc.Redispatch = append(doc.Redispatch, redone{Seq: oc.Seq, ReplayOf: oc.Original.Seq, Role: oc.Original.Role,
				Status: string(oc.Response.Status), Reused: oc.Response.Reused, Summary: oc.Response.Summary, Reason: oc.Response.Reason})
		}
	}
	out, err := json.Marshal(doc)
	return string(out), err
}

// flagValue is the value of flag in args (given as "--flag VALUE"), "" when
// it is not given.
// pathArg is the command line's PATH argument (a dispatch dir, a manifest, a
// scratch dir), "" none: what is neither a flag nor a flag's value.
func pathArg(args []string) string {
	path := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "plan" && i == 0:
		case a == "--agent" || a == "--templates" || a == "--now":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			path = a
		}
	}
	return path
}

func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// runDir is the directory that holds the project, $HOME and $TMPDIR of c: the
// whole of what a killed replay may have been writing.
func runDir(c pipesim.XCall) (string, error) {
	dir := filepath.Dir(filepath.Clean(c.Dir))
	for _, p := range []string{c.Home, c.Tmp} {
		if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("inproc: %s is not beside the project %s: a kill could not stop replay's writes there", p, c.Dir)
		}
	}
	return dir, nil
}

// failed is the result of a run that ended with err (nil: exit 0): its exit
// code as cmd/replay maps the kinds of error (internal/exitkinds), the error on stderr.
func failed(err error) pipesim.XReplayResult {
	if err == nil {
		return pipesim.XReplayResult{}
	}
	return pipesim.XReplayResult{Code: exitkinds.Of(err), Stderr: "replay: " + err.Error() + "\n"}
}
