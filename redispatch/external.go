package redispatch

import (
	"fmt"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/templates"
)

// guardExternal fails a replay closed before any dispatch when a dispatch of an
// external role would run live (no recording serves it) and o does not allow it,
// and arms o's runner to refuse such a live call should a recording the forecast
// counted on turn out stale when its turn comes. A resume of the pipeline's own
// run (no replay mode) is not guarded: it carries on the pipeline's own work.
func guardExternal(a *resume.Analysis, o *Options) error {
	if !o.refuseExternal() || o.Runner == nil {
		return nil
	}
	pl := a.Pipeline
	external := false
	for _, d := range resume.WorkItems(a) {
		external = external || pl.Profile.IsExternal(d.Role)
	}
	if !external {
		return nil
	}
	start := ForecastStart{}
	if repo, head, err := agent.OpenHead(o.WorkDir); err == nil && repo != nil {
		start = ForecastStart{Repo: repo, Head: head}
	}
	score, err := Forecast(a, *o, start)
	if err != nil {
		return err
	}
	if err := ExternalRefusal(score); err != nil {
		return err
	}
	r := *o.Runner
	r.Guard = func(req agent.Request, why string) error {
		if !pl.Profile.IsExternal(req.Role) {
			return nil
		}
		return errkind.Errorf(ErrExternal, "seq %d (%s): external role would run live during a replay (%s); it was not run — record it first, or pass --allow-external to let it run", req.Seq, req.Role, why)
	}
	o.Runner = &r
	return nil
}

// pureCommitted returns a warning when oc is a live dispatch of a pure role (its
// profile says it writes only dispatch-dir files) that created commits; "" otherwise.
func pureCommitted(pl *pipeline.Pipeline, oc Outcome) string {
	r := oc.Response
	if r.Reused || r.Effects == nil || r.Effects.HeadAfter == "" {
		return ""
	}
	if c, _ := pl.Profile.EffectOf(oc.Original.Role); c != templates.EffectPure {
		return ""
	}
	return fmt.Sprintf("seq %d (%s, replay of %d): the profile says role %s is pure (no commits), but its live run created commits (HEAD %s -> %s); they are kept — check the agent, or list the role under side_effects.commits in the profile",
		oc.Seq, oc.Original.Role, oc.Original.Seq, oc.Original.Role, short(r.Effects.HeadBefore), short(r.Effects.HeadAfter))
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	if h == "" {
		return "-"
	}
	return h
}
