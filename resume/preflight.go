package resume

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// PreflightOptions is what a run will use beyond the resume decision.
type PreflightOptions struct {
	// Templates is the --templates folder (absolute), "" when not given.
	Templates string
	// TemplateRef is --template-ref, "" when not given.
	TemplateRef string
	// Redispatch is set when the run re-dispatches work itself (--agent, or an A/B
	// replay): a dispatch that cannot be rebuilt then stops it.
	Redispatch bool
	// Mutations are the --mutate flags; each must name a template the run uses or
	// one in Templates.
	Mutations []mutate.Mutation
	// Confirm checks what the resume's restore will have to ask (a resume, not an
	// A/B replay): with no terminal to ask on (CanPrompt false), a run with no
	// verified boundary stops; one with no checkpoint needs Yes (a warning).
	Confirm   bool
	CanPrompt bool
	Yes       bool
}

// Preflight is the outcome of the checks that run before anything is written.
type Preflight struct {
	// Lines describe each check, one line each; failures start with "FAIL:",
	// warnings with "warning:" (or the seed's "Warning: Template ..." for a template
	// changed since the original run).
	Lines []string
	// Err is nil when nothing failed; it maps to exit 2 for a bad flag and 1 for a
	// dispatch that cannot be rebuilt.
	Err error
}

// RunPreflight checks, read-only, everything a run could fail on after it started
// writing: the --templates folder, the --template-ref, dispatch files that are gone
// with no template to rebuild them from, and templates changed since the original
// run. A real run stops on Err before its first write; the dry-run plan shows Lines.
func RunPreflight(a *Analysis, o PreflightOptions) *Preflight {
	pl := a.Pipeline
	pf := &Preflight{Lines: []string{}}
	var errs []error
	fail := func(err error, usage bool) {
		pf.Lines = append(pf.Lines, "FAIL: "+err.Error())
		if usage {
			err = errkind.New(ErrBadInput, err.Error())
		}
		errs = append(errs, err)
	}
	templatesOK := false
	if o.Templates != "" {
		if st, err := os.Stat(o.Templates); err != nil || !st.IsDir() {
			fail(fmt.Errorf("--templates %s: not a directory; give the skill's template folder", o.Templates), true)
		} else {
			templatesOK = true
			pf.Lines = append(pf.Lines, fmt.Sprintf("--templates %s: found", o.Templates))
		}
	}
	if o.TemplateRef != "" {
		switch {
		case o.Templates == "":
			fail(fmt.Errorf("--template-ref %s reads the templates folder's git history: give --templates DIR too", o.TemplateRef), true)
		case templatesOK:
			if h, err := mutate.CheckRef(o.Templates, o.TemplateRef); err != nil {
				fail(err, true)
			} else {
				pf.Lines = append(pf.Lines, fmt.Sprintf("--template-ref %s: commit %s", o.TemplateRef, h.String()[:12]))
			}
		}
	}
	if len(o.Mutations) > 0 {
		all := make([]string, 0, len(pl.Dispatches))
		for _, d := range pl.Dispatches {
			all = append(all, d.Template)
		}
		dir := ""
		if templatesOK {
			dir = o.Templates
		}
		if err := mutate.Unknown(o.Mutations, all, dir); err != nil {
			fail(err, true)
		}
	}
	work := WorkItems(a)
	used := make([]string, 0, len(work))
	for _, d := range work {
		used = append(used, d.Template)
		pf.checkDispatchFile(a, d, o, templatesOK, fail)
	}
	if o.Confirm && len(work) > 0 && !o.CanPrompt {
		pf.checkConfirmation(a, o, &errs)
	}
	if templatesOK {
		if first := firstTime(pl); !first.IsZero() {
			// The seed's words: "Warning: Template X was modified ...".
			pf.Lines = append(pf.Lines, mutate.Stale(o.Templates, used, first)...)
		}
	}
	pf.Err = errors.Join(errs...)
	if pf.Err != nil && len(errs) == 1 {
		pf.Err = errs[0]
	}
	if pf.Err != nil {
		pf.Err = fmt.Errorf("%w; nothing was changed", pf.Err)
	}
	return pf
}

// checkDispatchFile checks that the dispatch file of d can be read, or rebuilt from
// its template when it is gone.
func (pf *Preflight) checkDispatchFile(a *Analysis, d *pipeline.Dispatch, o PreflightOptions, templatesOK bool, fail func(error, bool)) {
	pl := a.Pipeline
	path := pl.Files[d.Seq]
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	if templatesOK {
		if t, err := mutate.FindTemplate(o.Templates, d.Template); err == nil {
			if others := a.ambiguousRebuild(d); others != "" {
				why := fmt.Errorf("seq %d (%s, phase %s, no task): its dispatch file %s is gone and %s; task-less dispatches of one role and phase differ only by their instructions, which the template %s does not carry, so a prompt rebuilt from it cannot tell which work seq %d was: put the dispatch file back or re-dispatch that work yourself",
					d.Seq, report.Safe(d.Role), report.Safe(d.Phase), report.Safe(d.File), others, t, d.Seq)
				if o.Redispatch {
					fail(why, false)
					return
				}
				pf.Lines = append(pf.Lines, "warning: "+why.Error()+" before re-dispatching it")
				return
			}
			pf.Lines = append(pf.Lines, fmt.Sprintf("seq %d (%s): dispatch file gone; it will be rebuilt from the template %s", d.Seq, d.Role, t))
			return
		}
	}
	why := fmt.Errorf("seq %d (%s): its dispatch file %s is gone and no template %q to rebuild it from; pass --templates DIR (the skill's template folder)", d.Seq, d.Role, d.File, d.Template)
	if o.Redispatch {
		fail(why, false)
		return
	}
	pf.Lines = append(pf.Lines, "warning: "+why.Error()+" before re-dispatching it")
}

// replaysRetryOf reports whether e is a replay (a resume's re-dispatch) of a
// dispatch that d retries or that retries d: one work item, re-dispatched
// once for both after the crash that ended d (a dispatch a crash left in
// flight never ended, yet it did not run beside a later session's replay).
func (a *Analysis) replaysRetryOf(e, d *pipeline.Dispatch) bool {
	if e.ReplayOf <= 0 {
		return false
	}
	r := a.find(a.rootOf(e))
	return r != nil && r != d && (isRetry(r, d) || isRetry(d, r))
}

// firstTime is the header time of the pipeline's first dispatch; zero when none.
func firstTime(pl *pipeline.Pipeline) time.Time {
	var first time.Time
	for _, d := range pl.Dispatches {
		if !d.Time.IsZero() && (first.IsZero() || d.Time.Before(first)) {
			first = d.Time
		}
	}
	return first
}

// checkConfirmation adds the refusal a resume with no terminal to ask on meets:
// no verified boundary (only a terminal can choose the disk state or a fresh
// start, whatever the flags); no checkpoint to restore is a warning (--yes
// answers it). The plan says so, so that what it lists is what the run does.
func (pf *Preflight) checkConfirmation(a *Analysis, o PreflightOptions, errs *[]error) {
	var msg string
	switch {
	case a.NoVerifiedBoundary:
		msg = "no verified boundary: the resume asks whether to resume on the current disk state or start fresh, and there is no terminal to ask on; run replay in a terminal"
	case a.Undo != nil && !o.Yes:
		// the undo is a restore: it asks, and --yes answers it
		pf.Lines = append(pf.Lines, fmt.Sprintf("warning: nothing restores the tree at %s and the work attempts that never completed left is undone by restoring the project's commit from before them: that needs --yes (there is no terminal to ask on)", a.Resume.Label()))
		return
	case (a.NoCheckpoint || a.Checkpoint == nil) && !a.Resume.Start && !a.Resume.End && !o.Yes:
		// --yes answers it: a warning, not a failure (the plan is usually asked
		// without the flags of the run that follows).
		pf.Lines = append(pf.Lines, fmt.Sprintf("warning: no checkpoint to restore for %s: resuming on the current disk state needs --yes (there is no terminal to ask on)", a.Resume.Label()))
		return
	default:
		return
	}
	pf.Lines = append(pf.Lines, "FAIL: "+msg)
	*errs = append(*errs, errkind.New(ErrNotConfirmed, msg))
}

// ambiguousRebuild says why a prompt rebuilt from its template could be
// other work than task-less d's, "" when nothing says so: the role has
// several units of work in d's phase, told apart only by their instructions
// (an audit's scanners, one per package). Evidence of that: another
// task-less dispatch of the role and phase that ran at the same time as d
// (each started before the other ended, by the order of the manifest's
// lines; a dispatch in flight never ended, a dispatch file with no line
// started after every line: nobody retries work still running), or two
// such dispatches whose instructions differ. A dispatch file cut inside its
// header (Evidence.Cut) counts as such a dispatch with no line unless what
// the crash left of it rules that out (another template; a phase or task it
// cannot begin: CutDispatchHeader.CouldBe), as evidence only: a field the
// crash cut is no evidence of other work. A replay of d is d's own work;
// a single other dispatch that started after d ended may be its retry.
func (a *Analysis) ambiguousRebuild(d *pipeline.Dispatch) string {
	if d.Task != nil {
		return ""
	}
	const never = int(^uint(0) >> 1)
	span := func(x *pipeline.Dispatch) (start, end int) {
		if !x.Recorded || x.Entry == nil {
			return never - 1, never
		}
		start, end = x.Entry.FirstLine, x.Entry.Line
		if x.Status == manifest.StatusDispatched {
			end = never
		}
		return start, end
	}
	ds, de := span(d)
	var told []*pipeline.Dispatch // the others whose instructions can be read
	for _, e := range a.Dispatches {
		if e == d || e.Task != nil || e.Role != d.Role || e.Phase != d.Phase || a.rootOf(e) == a.rootOf(d) || a.replaysRetryOf(e, d) {
			continue
		}
		if es, ee := span(e); ds < ee && es < de {
			return fmt.Sprintf("seq %d of the same role and phase ran beside it", e.Seq)
		}
		if a.describe != nil && ownSeqless(a.describe(e), e.Seq) != "" {
			told = append(told, e)
		}
	}
	// A dispatch file a crash cut inside its header is no dispatch, yet its
	// first line names its role: with no manifest line, it started after
	// every line, beside a dispatch still in flight, and it was other work
	// than a task-less unit of d's phase only where what is left says so.
	for _, seq := range slices.Sorted(maps.Keys(a.cut)) {
		h := a.cut[seq]
		if a.find(seq) == nil && (h.Template == d.Role || h.Template == d.Template) && h.CouldBe(d.Phase, "") && de == never {
			return fmt.Sprintf("seq %d of the same role and phase, whose dispatch file the crash cut inside its header, ran beside it", seq)
		}
	}
	for i, x := range told {
		for _, y := range told[i+1:] {
			if a.rootOf(x) != a.rootOf(y) && !a.sameInstructions(x, y) {
				return fmt.Sprintf("seqs %d and %d of the same role and phase were given different instructions", x.Seq, y.Seq)
			}
		}
	}
	return ""
}
