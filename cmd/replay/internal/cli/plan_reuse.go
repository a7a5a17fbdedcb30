package cli

import (
	"fmt"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// externalPreflight refuses an A/B replay before its worktree is made when the
// forecast has a dispatch of an external role no recording would serve (the
// re-dispatch refuses it again, should the forecast have been wrong).
func externalPreflight(f *runEnv, rf RunFlags, a *resume.Analysis, muts []mutate.Mutation) error {
	if rf.AllowExternal {
		return nil
	}
	return redispatch.ExternalRefusal(planReuse(f, rf, a, muts))
}

// planReuse forecasts which dispatches to re-execute recordings would serve in the
// run the flags describe; nil when it re-dispatches nothing (no --agent, no
// --mutate). A forecast that cannot be made is a warning of the plan, not a failure.
func planReuse(f *runEnv, rf RunFlags, a *resume.Analysis, muts []mutate.Mutation) *report.ReuseScore {
	if rf.Agent == "" && len(muts) == 0 {
		return nil
	}
	pl := a.Pipeline
	cwd, _ := f.Getwd()
	templates := absPath(cwd, rf.Templates)
	reuse, _ := agent.ParseReuse(rf.Reuse) // validated with the flags
	runner := &agent.Runner{Store: agent.OpenStore(pl.DispatchDir), Reuse: reuse}
	if rf.Agent != "" {
		runner.Agent, _ = newAgent(rf.Agent, nil)
	}
	o := redispatch.Options{Runner: runner, WorkDir: pl.ProjectDir, Template: templateReader(templates), AllowExternal: rf.AllowExternal, Resume: len(muts) == 0}
	if len(muts) > 0 {
		ao := ab.Options{Mutations: muts, Templates: templates}
		runner.Store = ab.PlanStore(pl)
		o.Transform, o.TemplateHash, o.Extra = ao.Transform, ao.TemplateHash, ab.EntryExtra()
	}
	start := redispatch.ForecastStart{Repo: pl.Project}
	if head, err := resume.StartHead(a); err == nil {
		start.Head = head
	}
	score, err := redispatch.Forecast(a, o, start)
	if err != nil {
		pl.Warn("%s", fmt.Sprintf("reuse score: cannot forecast the replay's reuse: %v", err))
		return nil
	}
	return score
}

// markRuns says in the plan's rows which items a recording would serve (the
// forecast): "recording <key>"; the others stay "live".
func markRuns(plan *report.Plan, score *report.ReuseScore) {
	if score == nil {
		return
	}
	served := map[int]string{}
	for _, it := range score.Items {
		if it.Served {
			served[it.Seq] = "recording " + it.Key
		}
	}
	for i, r := range plan.Redo {
		if run, ok := served[r.Seq]; ok {
			plan.Redo[i].Run = run
		}
	}
}
