package resumeflow

import (
	"context"
	"errors"
	"fmt"
	"os/signal"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resume"
)

// Redispatch runs the work from a's resume point through d.Agent, recordings in
// store first, as req asks (jobs, timeout, reuse, external roles, templates); o
// carries the session and the working tree and, for A/B replays and forks, the
// transform, the entry marks and where the entries go. The re-dispatch stops on
// d.Interrupt's signals with an error of kind context.Canceled.
func Redispatch(ctx context.Context, a *resume.Analysis, store *agent.Store, o redispatch.Options, req Request, d Deps) (*redispatch.Report, error) {
	d = d.withDefaults()
	reuse, err := agent.ParseReuse(string(req.Reuse))
	if err != nil {
		return nil, err
	}
	if len(d.Interrupt) > 0 {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, d.Interrupt...)
		defer stop()
	}
	if live, ok := d.Progress.(LiveProgress); ok {
		live.Start()
		defer live.Stop()
	}
	o.Log, o.Progress = d.Log, d.Progress
	o.Runner = agent.NewRunner(d.Agent, store)
	o.Runner.Reuse = reuse
	o.AllowExternal = req.AllowExternal
	o.Jobs, o.Timeout = max(req.Jobs, 1), req.Timeout
	o.Now = d.Now // the wall clock, or a fixed one: durations are then 0
	o.Template = TemplateReader(absPath(d.Env.Cwd, req.Templates))
	rep, err := redispatch.Run(ctx, a, o)
	if errors.Is(err, context.Canceled) {
		// Interrupted like any command; what finished is in the manifest.
		err = fmt.Errorf("interrupted during the re-dispatch; the manifest records what finished, run replay again to resume from there: %w", err)
	}
	return rep, err
}

// TemplateReader reads templates from dir (the --templates folder, found as
// mutate.FindTemplate finds them); nil when no dir was given.
func TemplateReader(dir string) func(string) ([]byte, error) {
	if dir == "" {
		return nil
	}
	return func(name string) ([]byte, error) {
		path, err := mutate.FindTemplate(dir, name)
		if err != nil {
			return nil, err
		}
		return runfile.ReadFile(path, runfile.Template)
	}
}
