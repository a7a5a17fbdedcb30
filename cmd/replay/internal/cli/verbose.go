package cli

import (
	"fmt"
	"time"

	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// Verbosef writes one detail line to stderr when --verbose was given, through the
// printer (which escapes values from a run's files and stays silent under --quiet).
func (f *Factory) Verbosef(format string, args ...any) {
	f.Printer().Verbosef("verbose: %s", fmt.Sprintf(format, args...))
}

// verbosePipeline reports, under --verbose, where the pipeline's files were found,
// which profile was chosen, how long loading and deciding took (measured with the
// injected clock: 0 under --now) and a summary of the checks --explain lists.
func verbosePipeline(f *Factory, pl *pipeline.Pipeline, a *resume.Analysis, load, decide time.Duration) {
	if !f.Verbose {
		return
	}
	f.Verbosef("manifest %s (session %s, %d entries)", pl.Location.ManifestPath, pl.Location.SessionID, len(pl.Manifest.Entries))
	f.Verbosef("dispatch dir %s; scratch %s; shadow %s; project %s", pl.DispatchDir, orNone(pl.ScratchDir), orNone(pl.ShadowDir), orNone(pl.ProjectDir))
	f.Verbosef("profile %s (%s); %d dispatch(es), %d checkpoint(s) of this run, %d of another run; run start %s", resume.ProfileName(pl.Profile), pl.ProfileReason, len(pl.Dispatches), len(pl.Checkpoints), len(pl.ForeignCheckpoints), orNone(formatStart(pl)))
	if a != nil {
		f.Verbosef("decision: resume at %s; %d work item(s); next seq %d", a.Resume.Label(), len(resume.WorkItems(a)), pl.NextSeq)
	}
	if a != nil {
		rows := resume.ExplainRows(a)
		failed := 0
		for _, r := range rows {
			if r.Verdict != "ok" {
				failed++
			}
		}
		f.Verbosef("%d check(s) decided the resume point: %d ok, %d failed (--explain lists each)", len(rows), len(rows)-failed, failed)
		for _, r := range rows {
			if r.Verdict != "ok" {
				f.Verbosef("failed at %s: %s %s", r.Boundary, r.Check, r.Detail)
			}
		}
	}
	f.Verbosef("loaded in %s, decided in %s", load.Round(time.Millisecond), decide.Round(time.Millisecond))
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
