package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/fsutil"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// abRun is an A/B replay: the work from the replay point re-dispatched with template
// mutations in an isolated worktree, never touching the user's tree, branch or
// original manifest lines; with --diff, the comparison with the original run.
func abRun(opts *ResumeOptions) error {
	f := opts.Factory
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	muts, err := mutate.Parse(opts.Mutations, cwd)
	if err != nil {
		return err
	}
	if opts.Agent == "" {
		return usageError("an A/B replay re-dispatches work: give --agent CMD (or --agent builtin:sim, --agent recorded)")
	}
	ag, err := newAgent(opts.Agent, f.environ())
	if err != nil {
		return err
	}
	ab := resume.ABOptions{Mutations: muts, Templates: absPath(cwd, opts.Templates)}
	if opts.TemplateRef != "" {
		if ab.Templates == "" {
			return usageError("--template-ref %s reads the templates folder's git history: give --templates DIR too", opts.TemplateRef)
		}
		if _, err := mutate.CheckRef(ab.Templates, opts.TemplateRef); err != nil {
			return usageError("%v", err)
		}
		pinned, err := os.MkdirTemp(tmpDir(f), "replay-templates-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(pinned)
		if err := mutate.ExtractRef(ab.Templates, opts.TemplateRef, pinned); err != nil {
			return usageError("%v", err)
		}
		ab.Pinned = pinned
	}
	pl, a, now, err := decide(f, opts.PipelineFlags, ab.Uses)
	if err != nil {
		return err
	}
	if pl.ProjectErr != nil {
		// The worktree would join this project's history to another project's checkpoint.
		return pl.ProjectErr
	}
	for _, w := range resume.Warnings(pl, a) {
		f.Warnf("%s", w)
	}
	if err := preflight(f, pl, a, opts.RunFlags, true, muts...); err != nil {
		return err
	}
	work := resume.WorkItems(a)
	if len(work) == 0 {
		if f.JSON {
			return report.WriteJSON(f.IOStreams.Out, abDocument{Plan: resume.BuildPlan(pl, a, mutate.Labels(muts)), Mutations: mutate.Labels(muts)})
		}
		_, err := fmt.Fprintf(f.IOStreams.Out, "Nothing to replay: no dispatch from the replay point on, and none uses a mutated template.\n")
		return err
	}
	used := make([]string, 0, len(work))
	for _, d := range work {
		used = append(used, d.Template)
	}
	for _, w := range mutate.Unused(muts, used) {
		f.Warnf("%s", w)
	}
	wt, err := resume.PrepareWorktree(pl, a.Checkpoint, resume.NewSession(pl, now))
	if err != nil {
		return err
	}
	f.Printer().Infof("A/B replay %s runs in %s (branch %s at %s); your working tree is not touched.\n", wt.Session, wt.Dir, wt.Branch, short(wt.Base))
	rep, err := redispatch(opts, pl, a, ag, resume.ABStore(pl, wt), resume.RedispatchOptions{
		Session: wt.Session, WorkDir: wt.Dir, Transform: ab.Transform, Extra: resume.ABEntryExtra(),
	})
	if err != nil {
		return err
	}
	if f.JSON {
		return writeABJSON(opts, pl, a, wt, muts, rep)
	}
	if err := writeABReport(f.IOStreams.Out, pl, a, wt, muts, rep, f.TableStyle()); err != nil {
		return err
	}
	if rep.Stopped != "" {
		return fmt.Errorf("A/B replay stopped: %s; the worktree %s is kept", rep.Stopped, wt.Dir)
	}
	if !opts.Diff {
		return nil
	}
	_, err = writeDiff(opts, wt.Session, mutate.Labels(muts))
	return err
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
func redoneOf(rep *resume.RedispatchReport) []redoneJSON {
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

// writeABJSON prints the A/B replay, and with --diff its comparison (the line
// appended to replay-diff.jsonl), as one JSON document.
func writeABJSON(opts *ResumeOptions, pl *resume.Pipeline, a *resume.Analysis, wt *resume.Worktree, muts []mutate.Mutation, rep *resume.RedispatchReport) error {
	f := opts.Factory
	doc := abDocument{Plan: resume.BuildPlan(pl, a, mutate.Labels(muts)), Session: wt.Session, Worktree: wt.Dir, Branch: wt.Branch,
		Base: wt.Base.String(), Mutations: mutate.Labels(muts), Redispatch: redoneOf(rep), Stopped: rep.Stopped}
	if rep.Stopped == "" && opts.Diff {
		line, err := writeDiff(opts, wt.Session, mutate.Labels(muts))
		if err != nil {
			return err
		}
		doc.Diff = line
	}
	if err := report.WriteJSON(f.IOStreams.Out, doc); err != nil {
		return err
	}
	if rep.Stopped != "" {
		return fmt.Errorf("A/B replay stopped: %s; the worktree %s is kept", rep.Stopped, wt.Dir)
	}
	return nil
}

// writeDiff compares the replay session with the original run: markdown on stdout
// and in replay-diff-<session>.md, one JSON line appended to replay-diff.jsonl and
// returned. Under --json the markdown goes to the file only.
func writeDiff(opts *ResumeOptions, session string, labels []string) (json.RawMessage, error) {
	f := opts.Factory
	pl, err := loadPipeline(f, opts.PipelineFlags)
	if err != nil {
		return nil, err
	}
	d, err := resume.CompareSession(pl, session, labels)
	if err != nil {
		return nil, err
	}
	var md strings.Builder
	if err := report.WriteDiffMarkdown(&md, d); err != nil {
		return nil, err
	}
	line, err := report.DiffJSONLine(d)
	if err != nil {
		return nil, err
	}
	mdName := "replay-diff-" + session + ".md"
	mdPath := filepath.Join(pl.DispatchDir, mdName)
	if err := fsutil.WriteAtomicIn(pl.DispatchDir, mdName, []byte(md.String())); err != nil {
		return nil, err
	}
	jsonlPath := filepath.Join(pl.DispatchDir, resume.DiffJSONLFile)
	if err := report.AppendDiffJSONL(jsonlPath, line); err != nil {
		return nil, err
	}
	f.Printer().Infof("Comparison written to %s and appended to %s.\n", mdPath, jsonlPath)
	if f.JSON {
		return line, nil
	}
	_, err = io.WriteString(f.IOStreams.Out, "\n"+md.String())
	return line, err
}

func absPath(cwd, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}

// writeABReport prints what the A/B replay re-dispatched.
func writeABReport(w io.Writer, pl *resume.Pipeline, a *resume.Analysis, wt *resume.Worktree, muts []mutate.Mutation, rep *resume.RedispatchReport, style report.TableStyle) error {
	plan := resume.BuildPlan(pl, a, mutate.Labels(muts))
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
