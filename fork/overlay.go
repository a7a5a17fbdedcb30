package fork

import (
	"maps"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// OverlaySession names the in-memory run an overlay makes.
const OverlaySession = "overlay"

// Overlay returns run base as it would be had each seq of vals (SEQ=FILE, paths
// relative to cwd) answered FILE: in memory only, nothing is written. A seq must
// be one of base's.
func Overlay(pl *pipeline.Pipeline, base *Run, vals []string, cwd string) (*Run, error) {
	_, last, ok := resume.SeqRange(pl)
	if !ok {
		return nil, errkind.Errorf(ErrBadFork, "--overlay: the run at %s has no dispatches", pl.Manifest.Path)
	}
	subs, err := parseSubstitutions("--overlay", vals, cwd, 1, last)
	if err != nil {
		return nil, err
	}
	out := &Run{Session: OverlaySession, Entries: maps.Clone(base.Entries)}
	for _, s := range subs {
		e, ok := out.Entries[s.Seq]
		if !ok {
			return nil, errkind.Errorf(ErrBadFork, "--overlay %d=%s: run %s has no entry for seq %d", s.Seq, s.File, base.Session, s.Seq)
		}
		out.Entries[s.Seq], _ = answered(e, s, OverlaySession)
	}
	return out, nil
}

// OverlayPipeline applies vals to the dispatches of pl in memory, for a plan: the
// dispatch of each seq takes the substituted status and summary. Nothing is written.
func OverlayPipeline(pl *pipeline.Pipeline, vals []string, cwd string) error {
	base, err := Open(pl, "")
	if err != nil {
		return err
	}
	over, err := Overlay(pl, base, vals, cwd)
	if err != nil {
		return err
	}
	for i, d := range pl.Dispatches {
		e, ok := over.Entries[d.Seq]
		if !ok || d.ReplaySession != "" || e.ReplaySession == nil {
			continue
		}
		c := *d
		c.Status = e.Status
		if e.Summary != nil {
			c.Summary = *e.Summary
		}
		c.History = append(append([]manifest.Status{}, d.History...), e.Status)
		pl.Dispatches[i] = &c
	}
	return nil
}
