package resumeflow

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resume"
)

// Locate says where the run is and how its resume point is decided, as the flags
// of the same names. Relative paths are from Env.Cwd.
type Locate struct {
	// Path is a manifest.jsonl, a dispatch directory, a directory holding
	// crucible-dispatch-*/ or a scratch directory; "" is the current project's run.
	Path, Repo, Scratch, Shadow string
	// Profile is a pipeline profile file or a built-in profile name, "" for the
	// one the run names.
	Profile string
	// FromPhase and FromSeq override the detected resume point.
	FromPhase string
	FromSeq   int
	// Overlays (SEQ=FILE) plan as if each seq had answered its file, in memory.
	Overlays []string
}

// Request is a resume as the user asked for it.
type Request struct {
	Locate
	// Yes answers the restore confirmation.
	Yes bool
	// Jobs bounds the dispatches of one parallel group run at once (0 is 1).
	Jobs int
	// Timeout bounds one agent call; 0 means none.
	Timeout time.Duration
	// Reuse says when a recording stands in for a dispatch ("" is exact).
	Reuse agent.Reuse
	// AllowExternal lets the re-dispatch run dispatches of external roles live.
	AllowExternal bool
	// Templates is the folder of the skill's prompt templates, "" when not given.
	Templates string
}

// Env are the directories of the environment a resume runs in.
type Env struct {
	// Home is $HOME (Claude Code's per-project state lives under it), Tmp is
	// $TMPDIR, SysTmp the system temporary root (/tmp), Cwd the working directory.
	Home, Tmp, SysTmp, Cwd string
}

// Printer receives what a use case says besides its result: warnings (once each),
// status lines and verbose detail. A nil Printer in Deps is silent.
type Printer interface {
	Warnf(format string, args ...any)
	Infof(format string, args ...any)
	Verbosef(format string, args ...any)
}

// LiveProgress is a progress reporter that draws while the re-dispatch runs: it
// is started before the first dispatch and stopped after the last.
type LiveProgress interface {
	redispatch.ProgressReporter
	Start()
	Stop()
}

// Deps are what a use case takes from the outside world, as values.
type Deps struct {
	// Env are the directories the run is looked for in.
	Env Env
	// Now is the clock (a fixed time for --now); nil is the wall clock.
	Now func() time.Time
	// Prompter asks the restore's questions; nil when no one can be asked, and
	// NoPrompt then says why (named in the refusal).
	Prompter resume.Prompter
	NoPrompt string
	// Printer receives warnings, status and verbose lines; nil is silent.
	Printer Printer
	// Verbose asks for the verbose detail (where the run was found, how the
	// resume point was decided).
	Verbose bool
	// Log receives the restore's and the re-dispatch's log lines (the undo
	// command among them); nil discards them.
	Log io.Writer
	// Progress is told of each dispatch; a LiveProgress is started and stopped
	// around the re-dispatch. Nil is silent.
	Progress redispatch.ProgressReporter
	// FileProgress, when set, counts the files a checkpoint restore walks.
	FileProgress checkpoint.FileProgress
	// Agent re-dispatches the work after the restore; nil hands it off.
	Agent agent.Agent
	// Interrupt are the signals that stop a re-dispatch (the manifest keeps what
	// finished); none leaves signals alone.
	Interrupt []os.Signal
	// Fault is called at the checkpoint restore's crash points
	// (checkpoint.RestoreOptions.Fault): a crash simulator's hook, nil in the
	// product.
	Fault func(point, file string)
}

// Result is what a resume did.
type Result struct {
	Analysis *resume.Analysis
	// Restore is nil when the decision holds no work item (nothing to resume).
	Restore *resume.Result
	// Report is nil when the work was handed off (no agent) or the pipeline
	// started fresh.
	Report *redispatch.Report
}

// Run carries out a resume: it loads the run and decides where it resumes; under
// the project's replay lock (deciding again when another replay held it) it
// refuses while an agent of a dead replay lives, warns, runs the preflight,
// restores behind the branch guard and a safety checkpoint, and re-dispatches
// the work from the resume point through d.Agent, or hands it off when there is
// none.
func Run(ctx context.Context, req Request, d Deps) (*Result, error) {
	d = d.withDefaults()
	a, _, err := Decide(req.Locate, nil, d)
	if err != nil {
		return nil, err
	}
	lock, err := a.Pipeline.LockShadow()
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if lock != nil && lock.Waited {
		// Another replay ran while this one waited: decide on what it left.
		if a, _, err = Decide(req.Locate, nil, d); err != nil {
			return nil, err
		}
	}
	if err := guard(a, req, d); err != nil {
		return nil, err
	}
	res := &Result{Analysis: a}
	if len(a.Items) == 0 {
		// The decision holds no work item: nothing to restore or re-dispatch,
		// and the skill goes on from here, appending to the manifest blindly
		// (crash simulator seed 29918: its next line glued onto a torn one).
		resume.SetAsideTornTail(a.Pipeline, resume.RunOptions{Tmp: d.Env.Tmp, Log: d.Log})
		return res, nil
	}
	if res.Restore, err = restore(a, req, d); err != nil || res.Restore.StartedFresh || d.Agent == nil {
		return res, err
	}
	pl := a.Pipeline
	o := redispatch.Options{Session: res.Restore.Session, WorkDir: pl.ProjectDir, Resume: true}
	res.Report, err = Redispatch(ctx, a, agent.OpenStore(pl.DispatchDir), o, req, d)
	return res, err
}

// guard stops a resume before anything is written: while an agent of a replay
// that died may still be writing into the project, or when the preflight fails.
// It warns of what the decision found on the way.
func guard(a *resume.Analysis, req Request, d Deps) error {
	waiting := func(live []agent.AgentRecord) {
		d.Printer.Infof("waiting up to %s for %d agent(s) of a replay that is gone to end (they were tied to its life)", agent.TiedAgentGrace, len(live))
	}
	if live := agent.WaitLiveAgents(a.Pipeline.DispatchDir, agent.TiedAgentGrace, waiting); len(live) > 0 {
		return errkind.New(checkpoint.ErrRefused, agent.LiveAgentsError(live))
	}
	// on another branch than the pipeline's, that is what the user must hear
	// first: a preflight failure there would send them fixing the wrong thing
	if err := resume.GuardBranch(a); err != nil {
		return err
	}
	for _, w := range resume.Warnings(a) {
		d.Printer.Warnf("%s", w)
	}
	for _, line := range resume.FailureLines(a) {
		d.Printer.Warnf("%s", "verification failed: "+line)
	}
	return Preflight(a, resume.PreflightOptions{Templates: absPath(d.Env.Cwd, req.Templates), Redispatch: d.Agent != nil}, d.Printer)
}

// restore restores the working tree at the resume point (resume.Run) and warns
// of what the reconstruction of the run's state found.
func restore(a *resume.Analysis, req Request, d Deps) (*resume.Result, error) {
	if st := a.Pipeline.Store; st != nil && d.FileProgress != nil {
		st.SetFileProgress(d.FileProgress)
	}
	res, err := resume.Run(a, resume.RunOptions{
		Yes: req.Yes, Prompter: d.Prompter, NoPrompt: d.NoPrompt, Now: d.Now, Tmp: d.Env.Tmp, Log: d.Log, Fault: d.Fault,
	})
	if err != nil {
		return nil, err
	}
	if !res.StartedFresh {
		for _, w := range res.State.Warnings {
			d.Printer.Warnf("%s", w)
		}
	}
	return res, nil
}

// Stopped returns the error of a re-dispatch a failed dispatch stopped; nil when
// the report ran to its end (or there is none).
func (r *Result) Stopped() error {
	if r.Report == nil || r.Report.Stopped == "" {
		return nil
	}
	return fmt.Errorf("re-dispatch stopped: %s; fix the cause and run replay again to resume from there", r.Report.Stopped)
}

// withDefaults fills what d leaves unset: the wall clock, a silent printer, a
// discarded log.
func (d Deps) withDefaults() Deps {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Printer == nil {
		d.Printer = silent{}
	}
	if d.Log == nil {
		d.Log = io.Discard
	}
	return d
}

// silent is the Printer of a caller that gave none.
type silent struct{}

func (silent) Warnf(string, ...any)    {}
func (silent) Infof(string, ...any)    {}
func (silent) Verbosef(string, ...any) {}

// absPath is p from cwd, cleaned; "" stays "".
func absPath(cwd, p string) string {
	if p == "" {
		return p
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}
