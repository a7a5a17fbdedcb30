package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// abRun is an A/B replay (see ab.Run): flags in, one use-case call, the report out.
func abRun(opts *ResumeOptions) error {
	f := opts.env()
	cwd, ag, err := cwdAndAgent(opts)
	if err != nil {
		return err
	}
	res, err := ab.Run(ab.Request{
		Mutations: opts.Mutations, Cwd: cwd, Templates: absPath(cwd, opts.Templates), TemplateRef: opts.TemplateRef,
		Tmp: tmpDir(f), Diff: opts.Diff, Agent: ag,
		Decide: func(mustRedo func(*pipeline.Dispatch) bool) (*resume.Analysis, time.Time, error) {
			return decide(f, opts.PipelineFlags, mustRedo)
		},
		Preflight: func(a *resume.Analysis, muts []mutate.Mutation) error {
			if err := preflight(f, a, opts.RunFlags, true, muts...); err != nil {
				return err
			}
			return externalPreflight(f, opts.RunFlags, a, muts)
		},
		Redispatch: func(a *resume.Analysis, ag agent.Agent, store *agent.Store, ro redispatch.Options) (*redispatch.Report, error) {
			return runRedispatch(opts, a, ag, store, ro)
		},
		Reload: func() (*pipeline.Pipeline, error) { return loadPipeline(f, opts.PipelineFlags) },
		Warn:   func(w string) { f.Warnf("%s", w) },
		Info:   func(line string) { f.Printer().Infof("%s", line) },
	})
	if err != nil {
		return err
	}
	return writeAB(opts, res)
}

// writeAB prints an A/B replay's result: the --json document, or the report and
// the comparison; a stopped replay is an error after its report.
func writeAB(opts *ResumeOptions, res *ab.Result) error {
	f := opts.env()
	wt, rep := res.Worktree, res.Report
	if wt == nil {
		if f.Global.JSON {
			return report.WriteJSON(f.IO.Out, abDocument{Plan: res.Plan, Mutations: res.Mutations})
		}
		_, err := fmt.Fprintf(f.IO.Out, "Nothing to replay: no dispatch from the replay point on, and none uses a mutated template.\n")
		return err
	}
	if f.Global.JSON {
		doc := abDocument{Plan: res.Plan, Session: wt.Session, Worktree: wt.Dir, Branch: wt.Branch,
			Base: wt.Base.String(), Mutations: res.Mutations, Redispatch: redoneOf(rep), Stopped: rep.Stopped}
		if res.Diff != nil {
			doc.Diff = res.Diff.Line
		}
		if err := report.WriteJSON(f.IO.Out, doc); err != nil {
			return err
		}
	} else {
		if err := writeABReport(f.IO.Out, res.Analysis.Pipeline, res.Plan, wt, rep, f.TableStyle()); err != nil {
			return err
		}
		if res.Diff != nil {
			if _, err := io.WriteString(f.IO.Out, "\n"); err != nil {
				return err
			}
			if err := report.WriteDiff(f.IO.Out, res.Diff.Comparison, f.TableStyle()); err != nil {
				return err
			}
		}
	}
	if rep.Stopped != "" {
		return fmt.Errorf("A/B replay stopped: %s; the worktree %s is kept", rep.Stopped, wt.Dir)
	}
	return nil
}

// abDocument is the --json form of an A/B replay: one document on stdout.
type abDocument struct {
	Plan       *report.Plan    `json:"plan"`
	Session    string          `json:"session,omitempty"`
	Worktree   string          `json:"worktree,omitempty"`
	Branch     string          `json:"branch,omitempty"`
	Base       string          `json:"base,omitempty"`
	Mutations  []string        `json:"mutations"`
	Redispatch []redoneJSON    `json:"redispatch"`
	Stopped    string          `json:"stopped,omitempty"`
	Diff       json.RawMessage `json:"diff,omitempty"`
}

// redoneJSON is one re-dispatched dispatch in the --json document of a resume or
// an A/B replay.
type redoneJSON struct {
	Seq      int    `json:"seq"`
	ReplayOf int    `json:"replay_of"`
	Role     string `json:"role"`
	Status   string `json:"status"`
	Reused   bool   `json:"reused"`
	Summary  string `json:"summary"`
	Reason   string `json:"reason,omitempty"`
}

// redoneOf lists the re-dispatched dispatches of rep for a --json document; empty,
// never nil, for a nil report.
func redoneOf(rep *redispatch.Report) []redoneJSON {
	out := []redoneJSON{}
	if rep == nil {
		return out
	}
	for _, oc := range rep.Outcomes {
		out = append(out, redoneJSON{Seq: oc.Seq, ReplayOf: oc.Original.Seq, Role: oc.Original.Role, Status: string(oc.Response.Status),
			Reused: oc.Response.Reused, Summary: oc.Response.Summary, Reason: oc.Response.Reason})
	}
	return out
}

func absPath(cwd, p string) string {
	if p == "" {
		return p
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// writeABReport prints what the A/B replay re-dispatched.
func writeABReport(w io.Writer, pl *pipeline.Pipeline, plan *report.Plan, wt *ab.Worktree, rep *redispatch.Report, style report.TableStyle) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# A/B replay %s of session %s\n\n", wt.Session, pl.Location.SessionID)
	fmt.Fprintf(&b, "**Replay point:** %s\n**Worktree:** %s (branch %s)\n\n## Template Mutations\n\n", plan.ResumePoint, wt.Dir, wt.Branch)
	for _, m := range plan.Mutations {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	b.WriteString("\n## Re-dispatch\n\n")
	if _, err := io.WriteString(w, report.SafeText(b.String())); err != nil {
		return err
	}
	return writeOutcomes(w, rep, style)
}

// cwdAndAgent returns the working directory and the agent --agent names (nil when
// it names none: the use case says whether it needs one).
func cwdAndAgent(opts *ResumeOptions) (string, agent.Agent, error) {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil || opts.Agent == "" {
		return cwd, nil, err
	}
	ag, err := newAgent(opts.Agent, f.environ())
	return cwd, ag, err
}
