package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// PipelineFlags are the flags that locate a pipeline and steer the resume decision,
// shared by the main command and `replay plan`.
type PipelineFlags struct {
	Path      string
	FromPhase string
	FromSeq   int
	Mutations []string
	Explain   bool
	Repo      string
	Scratch   string
	Shadow    string
}

// PlanOptions are the arguments of `replay plan`.
type PlanOptions struct {
	Factory *Factory
	PipelineFlags
}

// NewCmdPlan builds `replay plan [PATH]`, the same as `replay --dry-run`.
func NewCmdPlan(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "plan [PATH]",
		Short: "Print the replay plan without changing anything (same as --dry-run)",
		Long: `Print the "Replay Plan (dry-run)" for PATH: where the pipeline crashed, where it
resumes and from which checkpoint, the dispatches to skip and to re-execute.
Nothing on disk changes: not a byte.
` + exitStatusHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return planRun(opts)
		},
	}
	addPipelineFlags(cmd, &opts.PipelineFlags)
	return cmd
}

// addPipelineFlags registers the flags of PipelineFlags on cmd.
func addPipelineFlags(cmd *cobra.Command, pf *PipelineFlags) {
	fl := cmd.Flags()
	fl.StringVar(&pf.FromPhase, "from-phase", "", "resume from the boundary of phase N (overrides detection)")
	fl.IntVar(&pf.FromSeq, "from-seq", 0, "resume from the start of the phase containing dispatch seq N")
	fl.StringArrayVar(&pf.Mutations, "mutate", nil, "substitute template ORIG with file REPL (ORIG=REPL, repeatable)")
	fl.BoolVar(&pf.Explain, "explain", false, "show every check that decided the resume point")
	fl.StringVar(&pf.Repo, "repo", "", "project working tree (default: the shadow repository's worktree, else the current directory)")
	fl.StringVar(&pf.Scratch, "scratch", "", "scratch directory (default: from the pipeline marker)")
	fl.StringVar(&pf.Shadow, "shadow", "", "shadow checkpoint repository (default: beside the scratch directory)")
}

// decide loads the pipeline and decides the resume point, read-only. mustRedo names
// dispatches an A/B replay must re-execute; nil for a resume.
func decide(f *Factory, pf PipelineFlags, mustRedo func(*resume.Dispatch) bool) (*resume.Pipeline, *resume.Analysis, time.Time, error) {
	nowFn, err := f.Now()
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	pl, err := loadPipeline(f, pf)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	now := nowFn()
	a, err := resume.DecideFor(pl, pf.FromPhase, pf.FromSeq, now, mustRedo)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	return pl, a, now, nil
}

// tmpDir is $TMPDIR, or the system default when it is unset.
func tmpDir(f *Factory) string {
	if t := f.Getenv("TMPDIR"); t != "" {
		return t
	}
	return os.TempDir()
}

// SystemTmpEnv names the environment variable that moves the fixed system
// temporary root (/tmp, where Crucible writes crucible-build-mode.md) elsewhere; it
// exists so tests never read or write the real /tmp.
const SystemTmpEnv = "REPLAY_SYSTEM_TMP"

// sysTmpDir is the system temporary root: $REPLAY_SYSTEM_TMP, else /tmp.
func sysTmpDir(f *Factory) string {
	if t := f.Getenv(SystemTmpEnv); t != "" {
		return t
	}
	return paths.SystemTmp
}

func planRun(opts *PlanOptions) error {
	f := opts.Factory
	var mustRedo func(*resume.Dispatch) bool
	var labels []string
	if len(opts.Mutations) > 0 {
		cwd, err := f.Getwd()
		if err != nil {
			return err
		}
		muts, err := mutate.Parse(opts.Mutations, cwd)
		if err != nil {
			return err
		}
		mustRedo, labels = resume.ABOptions{Mutations: muts}.Uses, mutate.Labels(muts)
	}
	pl, a, _, err := decide(f, opts.PipelineFlags, mustRedo)
	if err != nil {
		return err
	}
	plan := resume.BuildPlan(pl, a, labels)
	if f.JSON {
		doc := struct {
			*report.Plan
			Explain []report.ExplainRow `json:"explain,omitempty"`
		}{Plan: plan}
		if opts.Explain {
			doc.Explain = resume.ExplainRows(a)
		}
		return report.WriteJSON(f.IOStreams.Out, doc)
	}
	if err := report.WritePlanMarkdown(f.IOStreams.Out, plan); err != nil {
		return err
	}
	if opts.Explain {
		return report.WriteExplain(f.IOStreams.Out, resume.ExplainRows(a))
	}
	return nil
}
