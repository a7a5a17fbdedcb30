package cli

import (
	"os"
	"syscall"
	"time"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/cmd/replay/internal/ui"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resumeflow"
)

// flowLocate is where the pipeline flags say the run is, as the use cases take it.
func flowLocate(pf PipelineFlags) resumeflow.Locate {
	return resumeflow.Locate{
		Path: pf.Path, Repo: pf.Repo, Scratch: pf.Scratch, Shadow: pf.Shadow, Profile: pf.Profile,
		FromPhase: pf.FromPhase, FromSeq: pf.FromSeq, Overlays: pf.Overlays,
	}
}

// flowRequest is the resume the flags ask for.
func flowRequest(pf PipelineFlags, rf RunFlags) resumeflow.Request {
	return resumeflow.Request{
		Locate: flowLocate(pf), Yes: rf.Yes, Jobs: rf.Jobs, Timeout: rf.AgentTimeout,
		Reuse: agent.Reuse(rf.Reuse), AllowExternal: rf.AllowExternal, Templates: rf.Templates,
	}
}

// flowEnv is the factory's environment as the use cases take it: HOME, TMPDIR,
// the system temporary root and the working directory.
func flowEnv(f *runEnv) (resumeflow.Env, error) {
	cwd, err := f.Getwd()
	if err != nil {
		return resumeflow.Env{}, err
	}
	return resumeflow.Env{Home: f.Getenv("HOME"), Tmp: tmpDir(f), SysTmp: sysTmpDir(f), Cwd: cwd}, nil
}

// flowDeps are the factory's dependencies as the use cases take them: its
// environment and clock, the prompter when someone can be asked, its printer,
// log and progress, ag (nil hands off), and Ctrl-C and SIGTERM stopping a
// re-dispatch.
func flowDeps(f *runEnv, ag agent.Agent) (resumeflow.Deps, error) {
	d, err := decideDeps(f)
	if err != nil {
		return d, err
	}
	d.NoPrompt, d.Log = f.IO.NoPromptReason(), f.Printer().Log()
	d.Progress, d.FileProgress, d.Agent = dispatchProgress(f), fileProgress(f), ag
	d.Interrupt = []os.Signal{os.Interrupt, syscall.SIGTERM}
	if p := interactivePrompter(f); p != nil {
		d.Prompter = p
	}
	return d, nil
}

// decideDeps are what a decision takes of the factory: its environment, clock
// and printer.
func decideDeps(f *runEnv) (resumeflow.Deps, error) {
	env, err := flowEnv(f)
	if err != nil {
		return resumeflow.Deps{}, err
	}
	clock, err := f.Now()
	if err != nil {
		return resumeflow.Deps{}, err
	}
	return resumeflow.Deps{Env: env, Now: clock, Printer: flowPrinter{f}, Verbose: f.Global.Verbose}, nil
}

// dispatchProgress is the re-dispatch's progress on stderr: a live line per
// running dispatch on a terminal, a line per finished one otherwise, nil when
// progress is off (--quiet, --json).
func dispatchProgress(f *runEnv) redispatch.ProgressReporter {
	switch {
	case !f.Printer().ShowProgress():
		return nil
	case f.IO.IsStderrTTY():
		// The elapsed time on a live line is the screen's own (the wall clock), it
		// is never written to a file.
		return ui.NewDispatchBoard(f.IO.ErrOut, time.Now)
	default:
		return redispatch.LineProgress{W: f.Printer().ProgressWriter()}
	}
}

// flowPrinter is the factory's printer as the use cases take it; verbose lines
// get the "verbose: " prefix of Factory.Verbosef.
type flowPrinter struct{ f *runEnv }

func (p flowPrinter) Warnf(format string, args ...any)    { p.f.Warnf(format, args...) }
func (p flowPrinter) Infof(format string, args ...any)    { p.f.Printer().Infof(format, args...) }
func (p flowPrinter) Verbosef(format string, args ...any) { p.f.Verbosef(format, args...) }
