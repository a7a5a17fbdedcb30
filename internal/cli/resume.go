package cli

import (
	"github.com/spf13/cobra"
)

// ResumeOptions are the flags and argument of the main command, `replay [PATH]`.
type ResumeOptions struct {
	Factory *Factory

	Path        string
	FromPhase   string
	FromSeq     int
	Mutations   []string
	TemplateRef string
	Templates   string
	Diff        bool
	DryRun      bool
	Explain     bool
	Yes         bool
	Agent       string
	Jobs        int
	Repo        string
	Scratch     string
	Shadow      string
}

// NewCmdResume builds the main command: resume (default) or A/B replay (with --mutate).
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "replay [PATH]",
		Short: "Resume a crashed multi-agent pipeline, or replay it with template mutations",
		Long: `Resume a crashed pipeline from the last phase boundary whose work can be proven
done, restoring the working tree from the matching shadow checkpoint behind a
branch guard and a confirmation; or, with --mutate, replay it in an isolated
worktree with prompt-template substitutions and compare the outcomes (--diff).

PATH is a manifest.jsonl, a dispatch directory, a directory holding
crucible-dispatch-*/ or dispatch-*/, or a scratch directory with .pipeline-active.
Without PATH, the scratch directory of the current project is used.
` + exitStatusHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if opts.Diff && len(opts.Mutations) == 0 {
				return usageError("--diff compares an A/B replay: give at least one --mutate ORIG=REPL with it")
			}
			if runF != nil {
				return runF(opts)
			}
			return resumeRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.FromPhase, "from-phase", "", "resume from the boundary of phase N (overrides detection)")
	fl.IntVar(&opts.FromSeq, "from-seq", 0, "resume from the start of the phase containing dispatch seq N")
	fl.StringArrayVar(&opts.Mutations, "mutate", nil, "substitute template ORIG with file REPL (ORIG=REPL, repeatable)")
	fl.StringVar(&opts.TemplateRef, "template-ref", "", "read every template from this git ref")
	fl.StringVar(&opts.Templates, "templates", "", "directory of the skill's prompt templates")
	fl.BoolVar(&opts.Diff, "diff", false, "with --mutate: write the comparison of original and replayed outcomes")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "plan only: print the replay plan and change nothing")
	fl.BoolVar(&opts.Explain, "explain", false, "show every check that decided the resume point")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "answer yes to the restore confirmation")
	fl.StringVar(&opts.Agent, "agent", "", "re-dispatch with this agent command (or builtin:sim, recorded)")
	fl.IntVar(&opts.Jobs, "jobs", 1, "run up to N dispatches of one parallel group at once")
	fl.StringVar(&opts.Repo, "repo", "", "project working tree (default: the current directory)")
	fl.StringVar(&opts.Scratch, "scratch", "", "scratch directory (default: $HOME/.claude/projects/<H>/memory)")
	fl.StringVar(&opts.Shadow, "shadow", "", "shadow checkpoint repository (default: $HOME/.claude/projects/<H>/checkpoints/<H>)")
	return cmd
}

func resumeRun(opts *ResumeOptions) error {
	if opts.DryRun {
		return notYetAvailable("replay --dry-run")
	}
	return notYetAvailable("replay (resume)")
}
