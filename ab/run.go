package ab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// Request is an A/B replay as the user asked for it, with the steps the caller
// owns (loading with its flags, the preflight display, the agent loop with its
// signals and progress display) passed in as functions.
type Request struct {
	// Mutations are the --mutate values (ORIG=REPL), paths relative to Cwd.
	Mutations []string
	Cwd       string
	// Templates is the skill's template folder (absolute); "" when not given.
	Templates string
	// TemplateRef pins the templates to a git ref of the Templates folder.
	TemplateRef string
	// Tmp is where the templates of TemplateRef are extracted for the run.
	Tmp string
	// Diff compares the replay with the original run when it finished.
	Diff bool
	// Baseline replays the dispatches the mutations would change, from the same
	// checkpoint, with their bodies as recorded: the baseline arm of a replicated
	// A/B replay. Its entries carry no mutation label.
	Baseline bool
	// Agent runs the re-dispatched work; nil is a usage error (an A/B replay
	// re-dispatches work).
	Agent agent.Agent

	// Decide loads the pipeline and decides it, with the dispatches that must be
	// re-executed because a mutation changes them; it returns the decision time.
	Decide func(mustRedo func(*pipeline.Dispatch) bool) (*resume.Analysis, time.Time, error)
	// Preflight checks the run before anything is written; an error stops it.
	Preflight func(a *resume.Analysis, muts []mutate.Mutation) error
	// Redispatch runs the work through ag, recordings in store first.
	Redispatch func(a *resume.Analysis, ag agent.Agent, store *agent.Store, o redispatch.Options) (*redispatch.Report, error)
	// Reload loads the pipeline again, with the replay's entries, for the comparison.
	Reload func() (*pipeline.Pipeline, error)
	// Warn and Info receive warnings and progress lines; nil is silent.
	Warn, Info func(string)
}

// Result is what an A/B replay did.
type Result struct {
	Analysis  *resume.Analysis
	Plan      *report.Plan
	Mutations []string
	// Worktree is nil when there was nothing to replay.
	Worktree *Worktree
	Report   *redispatch.Report
	// Diff is the comparison written when Request.Diff is set and the replay ran to
	// its end; nil otherwise.
	Diff *DiffFiles
}

// DiffFiles is a comparison as it was written beside the manifest.
type DiffFiles struct {
	// Comparison is what Markdown renders, for a screen to draw in its own style.
	Comparison   *report.ReplayDiff
	Markdown     string
	Line         json.RawMessage
	MarkdownPath string
	JSONLPath    string
}

// Run carries out an A/B replay: the work from the replay point re-dispatched with
// template mutations in an isolated worktree, never touching the user's tree,
// branch or original manifest lines; with Diff, the comparison with the original
// run, written to replay-diff-<session>.md and appended to replay-diff.jsonl.
func Run(r Request) (*Result, error) {
	muts, err := mutate.Parse(r.Mutations, r.Cwd)
	if err != nil {
		return nil, err
	}
	if r.Agent == nil {
		return nil, errkind.New(ErrBadOptions, "an A/B replay re-dispatches work: give --agent CMD (or --agent builtin:sim, --agent recorded)")
	}
	o := Options{Mutations: muts, Templates: r.Templates}
	if r.TemplateRef != "" {
		pinned, err := pinTemplates(r)
		if err != nil {
			return nil, err
		}
		defer safewrite.RemoveAllPath(pinned)
		o.Pinned = pinned
	}
	a, now, err := r.Decide(o.Uses)
	if err != nil {
		return nil, err
	}
	pl := a.Pipeline
	if pl.ProjectErr != nil {
		// The worktree would join this project's history to another project's checkpoint.
		return nil, pl.ProjectErr
	}
	for _, w := range resume.Warnings(a) {
		say(r.Warn, w)
	}
	if err := r.Preflight(a, muts); err != nil {
		return nil, err
	}
	labels := mutate.Labels(muts)
	res := &Result{Analysis: a, Plan: resume.BuildPlan(a, labels), Mutations: labels}
	work := resume.WorkItems(a)
	if len(work) == 0 {
		return res, nil
	}
	used := make([]string, 0, len(work))
	for _, d := range work {
		used = append(used, d.Template)
	}
	for _, w := range mutate.Unused(muts, used) {
		say(r.Warn, w)
	}
	if res.Worktree, err = PrepareWorktree(pl, a.Checkpoint, resume.NewSession(pl, now)); err != nil {
		return nil, err
	}
	wt := res.Worktree
	say(r.Info, fmt.Sprintf("A/B replay %s runs in %s (branch %s at %s); your working tree is not touched.\n", wt.Session, wt.Dir, wt.Branch, shortHash(wt.Base.String())))
	ro := redispatch.Options{Session: wt.Session, WorkDir: wt.Dir, Transform: o.Transform, Extra: EntryExtra(), TemplateHash: o.TemplateHash}
	if r.Baseline {
		ro.Transform, ro.TemplateHash = nil, Options{Templates: o.Templates, Pinned: o.Pinned}.TemplateHash
	}
	res.Report, err = r.Redispatch(a, r.Agent, Store(pl, wt), ro)
	if err != nil {
		return nil, err
	}
	if res.Report.Stopped != "" || !r.Diff {
		return res, nil
	}
	if res.Diff, err = writeDiff(r, wt.Session, labels); err != nil {
		return nil, err
	}
	return res, nil
}

// pinTemplates extracts the templates of r.TemplateRef into a new folder under
// r.Tmp and returns it; bad flags are usage errors.
func pinTemplates(r Request) (string, error) {
	if r.Templates == "" {
		return "", errkind.Errorf(ErrBadOptions, "--template-ref %s reads the templates folder's git history: give --templates DIR too", r.TemplateRef)
	}
	if _, err := mutate.CheckRef(r.Templates, r.TemplateRef); err != nil {
		return "", errkind.New(ErrBadOptions, err.Error())
	}
	pinned, err := os.MkdirTemp(r.Tmp, "replay-templates-")
	if err != nil {
		return "", err
	}
	if err := mutate.ExtractRef(r.Templates, r.TemplateRef, pinned); err != nil {
		return "", errors.Join(errkind.New(ErrBadOptions, err.Error()), safewrite.RemoveAllPath(pinned))
	}
	return pinned, nil
}

// writeDiff compares the replay session with the original run: markdown in
// replay-diff-<session>.md, one JSON line appended to replay-diff.jsonl.
func writeDiff(r Request, session string, labels []string) (*DiffFiles, error) {
	pl, err := r.Reload()
	if err != nil {
		return nil, err
	}
	d, err := CompareSession(pl, session, labels)
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
	out := &DiffFiles{Comparison: d, Markdown: md.String(), Line: line, MarkdownPath: filepath.Join(pl.DispatchDir, mdName), JSONLPath: filepath.Join(pl.DispatchDir, DiffJSONLFile)}
	if err := safewrite.WriteAtomicIn(pl.DispatchDir, mdName, []byte(out.Markdown)); err != nil {
		return nil, err
	}
	if err := report.AppendDiffJSONL(out.JSONLPath, line); err != nil {
		return nil, err
	}
	say(r.Info, fmt.Sprintf("Comparison written to %s and appended to %s.\n", out.MarkdownPath, out.JSONLPath))
	return out, nil
}

func say(to func(string), msg string) {
	if to != nil {
		to(msg)
	}
}

// shortHash is the 8-character form of a commit hash; "-" for the zero hash.
func shortHash(h string) string {
	if strings.Trim(h, "0") == "" {
		return "-"
	}
	return h[:8]
}
