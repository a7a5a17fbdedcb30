package cli

import (
	"errors"
	"fmt"
	"github.com/replaytool/replay/internal/prompt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/manifest"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// ForkOptions are the arguments of `replay fork`.
type ForkOptions struct {
	cmdBase
	// Prompter asks the user (only when IO.CanPrompt()).
	Prompter func() prompt.Prompter
	// Environ is the environment a command agent inherits (nil: the process's).
	Environ func() []string
	PipelineFlags
	At            int
	Substitutions []string
	Reason        string
	// Agent, Templates, Jobs and AgentTimeout run the fork's later dispatches
	// (--agent); without Agent the fork is only made.
	Agent        string
	Templates    string
	Jobs         int
	AgentTimeout time.Duration
	// AllowExternal lets the fork's continuation run external roles live.
	AllowExternal bool
}

// validate checks the flags of the fork's continuation as a run's.
func (opts *ForkOptions) validate() error {
	rf := RunFlags{Agent: opts.Agent, Jobs: opts.Jobs}
	return rf.validate(nil)
}

// NewCmdFork builds `replay fork [PATH] --at SEQ`.
func NewCmdFork(f *Factory, runF func(*ForkOptions) error) *cobra.Command {
	opts := &ForkOptions{cmdBase: baseOf(f), Prompter: f.Prompter, Environ: f.Environ}
	cmd := &cobra.Command{
		Use:   "fork [PATH] --at SEQ [--substitute SEQ=FILE]... [--reason TEXT]",
		Short: "Make a child run that shares the run up to SEQ and may answer some seqs differently",
		Long: `Make a child run of the run at PATH (a run, or a fork's directory for a fork of a
fork) with a new session id. The child shares its parent's dispatches below SEQ by
reference: its directory <scratch>/replay-forks/<session>/ holds a lineage record
(lineage.json: parent session, fork seq, reason, each substitution with its sha256,
creation time), its own manifest with only the entries it made, its recorded
responses, and its working tree: an isolated worktree started from the checkpoint in
effect at SEQ, on branch replay/<session>. --substitute SEQ=FILE takes FILE as the
response of seq SEQ (from SEQ on), recorded as the child's response for it: the
recording is the mock. With --agent, the child's dispatches from SEQ on then run
in its worktree, live or from recordings (the child's own first, then its ancestor
forks' and the original run's), into its own manifest. The parent's files are never
written; deleting the child's directory never touches the parent.
` + exitStatusFor("fork"),
		Example: `  replay fork --at 16 --substitute 16=verdict-fail.txt --reason "what if the reviewer failed task 1"
  replay fork ~/.claude/projects/<H>/memory/replay-forks/<SID> --at 17`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if !cmd.Flags().Changed("at") {
				return usageError("fork: give --at SEQ, the first seq the child does not share")
			}
			if err := opts.validate(); err != nil {
				return err
			}
			return runCommand(cmd, &opts.Global, opts, runF, forkRun)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.At, "at", 0, "the first `SEQ` the child does not share with its parent")
	fl.StringArrayVar(&opts.Substitutions, "substitute", nil, "take FILE as the response of seq SEQ (`SEQ=FILE`, repeatable)")
	fl.StringVar(&opts.Reason, "reason", "", "why the fork was made (`TEXT`, kept in its lineage record)")
	fl.StringVar(&opts.Agent, "agent", "", "then run the child's dispatches from SEQ on with this agent `CMD` (or builtin:sim, recorded), in its worktree")
	fl.StringVar(&opts.Templates, "templates", "", "directory `DIR` of the skill's prompt templates, for dispatches whose file is gone")
	fl.IntVar(&opts.Jobs, "jobs", runFlagDefaults.Jobs, "with --agent: run up to `N` dispatches of one parallel group at once")
	fl.BoolVar(&opts.AllowExternal, "allow-external", false, "with --agent: let dispatches of external roles (pushes, deploys) run live; without it they must be served from recordings")
	fl.DurationVar(&opts.AgentTimeout, "agent-timeout", runFlagDefaults.AgentTimeout, "with --agent: stop an agent call after this `DURATION`; 0 means no limit")
	addLocateFlags(cmd, &opts.PipelineFlags)
	return cmd
}

// addLocateFlags registers the flags that locate a run without steering a resume.
func addLocateFlags(cmd *cobra.Command, pf *PipelineFlags) {
	fl := cmd.Flags()
	fl.StringVar(&pf.Repo, "repo", "", "project working tree `DIR` (default: the current directory)")
	fl.StringVar(&pf.Scratch, "scratch", "", "scratch directory `DIR` (default: from the pipeline marker)")
	fl.StringVar(&pf.Shadow, "shadow", "", "shadow checkpoint repository `DIR` (default: beside the scratch directory)")
	addProfileFlag(cmd, &pf.Profile)
}

// loadRun loads the run PATH names: a fork's directory (its lineage record names
// the original run) or a run as every command locates it. It returns the original
// run and the session of the run PATH names ("" for the original run). A PATH that
// names no run is a usage error (exit 2), as for any other bad argument of fork,
// state and lineage.
func loadRun(f *runEnv, pf PipelineFlags) (*pipeline.Pipeline, string, error) {
	pl, session, err := locateRun(f, pf)
	if errors.Is(err, manifest.ErrNoManifest) {
		return nil, "", usageError("%v Give a run's manifest, scratch dir or fork dir.", err)
	}
	return pl, session, err
}

func locateRun(f *runEnv, pf PipelineFlags) (*pipeline.Pipeline, string, error) {
	if pf.Path != "" {
		cwd, err := f.Getwd()
		if err != nil {
			return nil, "", err
		}
		dir := absPath(cwd, pf.Path)
		if filepath.Base(filepath.Dir(dir)) == fork.ForksDir {
			if _, err := os.Lstat(filepath.Join(dir, fork.LineageFile)); err != nil {
				return nil, "", unknownFork(dir)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, fork.LineageFile)); err == nil {
			rec, err := fork.ReadRecord(dir)
			if err != nil {
				return nil, "", err
			}
			pf.Path = rec.RootManifest
			if pf.Scratch == "" {
				pf.Scratch = filepath.Dir(filepath.Dir(dir))
			}
			pl, err := loadPipeline(f, pf)
			return pl, rec.Session, err
		}
	}
	pl, err := loadPipeline(f, pf)
	return pl, "", err
}

// env is the fork's dependencies and flags as its helpers take them.
func (opts *ForkOptions) env() *runEnv {
	return &runEnv{cmdBase: &opts.cmdBase, Prompter: opts.Prompter, Environ: opts.Environ}
}

func forkRun(opts *ForkOptions) error {
	f := opts.env()
	nowFn, err := f.Now()
	if err != nil {
		return err
	}
	pl, parent, err := loadRun(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	res, err := fork.Create(fork.Request{Root: pl, Parent: parent, At: opts.At, Substitutions: opts.Substitutions,
		Reason: opts.Reason, Cwd: cwd, Tmp: tmpDir(f), Now: nowFn()})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		f.Warnf("%s", w)
	}
	if opts.Agent != "" {
		if err := continueFork(opts, pl, res.Record.Session); err != nil {
			return err
		}
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, struct {
			*fork.Record
			Dir      string `json:"dir"`
			Worktree string `json:"worktree_dir,omitempty"`
		}{res.Record, res.Dir, res.Worktree})
	}
	return writeFork(f, res)
}

func writeFork(f *runEnv, res *fork.Result) error {
	r := res.Record
	var b strings.Builder
	fmt.Fprintf(&b, "Fork %s of %s at seq %d\n", r.Session, r.Parent, r.ForkSeq)
	fmt.Fprintf(&b, "  directory: %s\n", report.Safe(res.Dir))
	if res.Worktree != "" {
		fmt.Fprintf(&b, "  worktree:  %s (branch %s, checkpoint %s)\n", report.Safe(res.Worktree), res.Branch, r.Checkpoint[:min(8, len(r.Checkpoint))])
	}
	for _, s := range r.Substitutions {
		fmt.Fprintf(&b, "  seq %d answered by %s (sha256 %s)\n", s.Seq, report.Safe(s.File), s.SHA256[:12])
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "  reason: %s\n", report.Safe(r.Reason))
	}
	fmt.Fprintf(&b, "Seqs below %d are the parent's, by reference. Remove the fork with: rm -r %s\n", r.ForkSeq, report.Safe(res.Dir))
	_, err := fmt.Fprint(f.IO.Out, b.String())
	return err
}

// unknownFork is the error for a fork directory with no lineage record, naming the
// forks that are there.
func unknownFork(dir string) error {
	recs, _ := fork.ListRecords(filepath.Dir(filepath.Dir(dir)))
	names := []string{}
	for _, r := range recs {
		names = append(names, r.Session)
	}
	return errkind.Errorf(fork.ErrBadFork, "%s is not a fork (no %s); the forks there: %s", dir, fork.LineageFile, orNone(strings.Join(names, ", ")))
}

// continueFork runs the fork's dispatches from its fork seq on with --agent.
func continueFork(opts *ForkOptions, pl *pipeline.Pipeline, session string) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	ag, err := newAgent(opts.Agent, f.environ())
	if err != nil {
		return err
	}
	f.Printer() // one printer, shared with the re-dispatch's options
	ro := &ResumeOptions{cmdBase: opts.cmdBase, Prompter: opts.Prompter, Environ: opts.Environ, RunFlags: RunFlags{Agent: opts.Agent, Jobs: opts.Jobs, AgentTimeout: opts.AgentTimeout, Templates: absPath(cwd, opts.Templates), AllowExternal: opts.AllowExternal}}
	rep, err := fork.Continue(pl, session, func(a *resume.Analysis, store *agent.Store, o redispatch.Options) (*redispatch.Report, error) {
		return runRedispatch(ro, a, ag, store, o)
	})
	if err != nil {
		return err
	}
	f.Printer().Infof("fork %s: %d dispatches re-run (%d from recordings, %d live, %d failed)", session, len(rep.Outcomes), rep.Reused, rep.Live, rep.Failed)
	if rep.Stopped != "" {
		return fmt.Errorf("fork %s: its dispatches stopped at %s; the fork and what ran are kept in %s", session, rep.Stopped, filepath.Join(pl.ScratchDir, fork.ForksDir, session))
	}
	return nil
}
