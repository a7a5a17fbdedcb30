package resumeflow

import (
	"strings"
	"time"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// Load reads the run l names, read-only; warm starts the walk of the project's
// history during the load (a decision reads it).
func Load(l Locate, env Env, warm bool) (*pipeline.Pipeline, error) {
	return pipeline.Load(pipeline.Options{
		Path: l.Path, Home: env.Home, Tmp: env.Tmp, SysTmp: env.SysTmp, Cwd: env.Cwd,
		Repo: l.Repo, Scratch: l.Scratch, Shadow: l.Shadow, ProfileFile: profileArg(env.Cwd, l.Profile),
		WarmHistory: warm,
	})
}

// Decide loads the run and decides where it resumes, read-only; it returns the
// analysis and the time it was decided at. mustRedo names dispatches an A/B replay
// must re-execute; nil for a resume. With d.Verbose, the printer hears where the
// run's files were found and how the resume point was decided.
func Decide(l Locate, mustRedo func(*pipeline.Dispatch) bool, d Deps) (*resume.Analysis, time.Time, error) {
	d = d.withDefaults()
	start := d.Now()
	pl, err := Load(l, d.Env, true)
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := overlay(pl, l.Overlays, d.Env.Cwd); err != nil {
		return nil, time.Time{}, err
	}
	now := d.Now()
	a, err := resume.DecideFor(pl, l.FromPhase, l.FromSeq, now, mustRedo)
	if err != nil {
		return nil, time.Time{}, err
	}
	if d.Verbose {
		verbosePipeline(d.Printer, pl, a, now.Sub(start), d.Now().Sub(now))
	}
	return a, now, nil
}

// overlay takes, in memory, each overlay SEQ=FILE as seq SEQ's answer and says so
// in the run's warnings.
func overlay(pl *pipeline.Pipeline, overlays []string, cwd string) error {
	if len(overlays) == 0 {
		return nil
	}
	if err := fork.OverlayPipeline(pl, overlays, cwd); err != nil {
		return err
	}
	for _, o := range overlays {
		pl.Warn("overlay: %s taken as the answer of that seq, in memory only; nothing is written", o)
	}
	return nil
}

// Preflight runs the checks before a real run writes anything: its warnings go to
// p, a failure stops the run.
func Preflight(a *resume.Analysis, o resume.PreflightOptions, p Printer) error {
	if p == nil {
		p = silent{}
	}
	pf := resume.RunPreflight(a, o)
	for _, line := range pf.Lines {
		if w, ok := strings.CutPrefix(line, "warning: "); ok {
			p.Warnf("%s", w)
		} else if strings.HasPrefix(line, "Warning: ") {
			p.Infof("%s", line)
		}
	}
	return pf.Err
}

// profileArg is --profile as pipeline.Options takes it: a path (an existing
// entry, or a value that cannot be a name) made absolute from cwd, else a
// built-in profile's name; paths.ResolveArg decides, as it does for the MCP
// server's confinement.
func profileArg(cwd, value string) string {
	if value == "" {
		return ""
	}
	if arg := paths.ResolveArg(cwd, value); arg.Kind == paths.ArgPath {
		return arg.Path
	}
	return value
}

// verbosePipeline tells p's verbose detail where the run's files were found,
// which profile was chosen, how long loading and deciding took (with the injected
// clock: 0 under a fixed one) and a summary of the checks that decided.
func verbosePipeline(p Printer, pl *pipeline.Pipeline, a *resume.Analysis, load, decide time.Duration) {
	p.Verbosef("manifest %s (session %s, %d entries)", pl.Location.ManifestPath, pl.Location.SessionID, len(pl.Manifest.Entries))
	p.Verbosef("dispatch dir %s; scratch %s; shadow %s; project %s", pl.DispatchDir, orNone(pl.ScratchDir), orNone(pl.ShadowDir), orNone(pl.ProjectDir))
	p.Verbosef("profile %s (%s); %d dispatch(es), %d checkpoint(s) of this run, %d of another run; run start %s", resume.ProfileName(pl.Profile), pl.ProfileReason, len(pl.Dispatches), len(pl.Checkpoints), len(pl.ForeignCheckpoints), orNone(formatStart(pl)))
	p.Verbosef("decision: resume at %s; %d work item(s); next seq %d", a.Resume.Label(), len(resume.WorkItems(a)), pl.NextSeq)
	rows := resume.ExplainRows(a)
	failed := 0
	for _, r := range rows {
		if r.Verdict != "ok" {
			failed++
		}
	}
	p.Verbosef("%d check(s) decided the resume point: %d ok, %d failed (--explain lists each)", len(rows), len(rows)-failed, failed)
	for _, r := range rows {
		if r.Verdict != "ok" {
			p.Verbosef("failed at %s: %s %s", r.Boundary, r.Check, r.Detail)
		}
	}
	p.Verbosef("loaded in %s, decided in %s", load.Round(time.Millisecond), decide.Round(time.Millisecond))
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// formatStart is the run's start as the scoping of checkpoints uses it, "" when
// nothing dates the run.
func formatStart(pl *pipeline.Pipeline) string {
	t := pl.RunStart()
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
