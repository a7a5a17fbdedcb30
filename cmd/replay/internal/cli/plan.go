package cli

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/resumeflow"
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
	// Profile is the --profile file: a pipeline profile that replaces the one the
	// run names.
	Profile string
	// Overlays are `replay plan`'s --overlay values (SEQ=FILE): the plan is made as
	// if each seq had answered its file, in memory.
	Overlays []string
}

// RunFlags are the flags of a run beyond locating the pipeline. `replay plan`
// accepts them all, as `--dry-run` does, and checks what they name.
type RunFlags struct {
	TemplateRef  string
	Templates    string
	Diff         bool
	Yes          bool
	Agent        string
	AgentTimeout time.Duration
	Jobs         int
	Reuse        string
	// AllowExternal lets a replay run dispatches of external roles live.
	AllowExternal bool
}

// runFlagDefaults are the values of the run flags not given, on the command line
// and in an MCP tool call alike.
var runFlagDefaults = RunFlags{AgentTimeout: 30 * time.Minute, Jobs: 1, Reuse: string(agent.ReuseExact)}

// addRunFlags registers the flags of RunFlags on cmd.
func addRunFlags(cmd *cobra.Command, rf *RunFlags) {
	fl := cmd.Flags()
	def := runFlagDefaults
	fl.StringVar(&rf.TemplateRef, "template-ref", "", "read every template from this git `REF` (of the --templates folder's repository)")
	fl.StringVar(&rf.Templates, "templates", "", "directory `DIR` of the skill's prompt templates")
	fl.BoolVar(&rf.Diff, "diff", false, "with --mutate: write the comparison of original and replayed outcomes")
	fl.BoolVarP(&rf.Yes, "yes", "y", false, "answer yes to the restore confirmation")
	fl.StringVar(&rf.Agent, "agent", "", "re-dispatch with this agent `CMD` (or builtin:sim, 'builtin:sim?flake=RATE&seed=N', recorded)")
	fl.DurationVar(&rf.AgentTimeout, "agent-timeout", def.AgentTimeout, "stop an agent call after this `DURATION` (status error); 0 means no limit")
	fl.IntVar(&rf.Jobs, "jobs", def.Jobs, "run up to `N` dispatches of one parallel group at once")
	fl.BoolVar(&rf.AllowExternal, "allow-external", false, "let a replay run dispatches of external roles (pushes, deploys, posts) live; without it they must be served from recordings")
	fl.StringVar(&rf.Reuse, "reuse", def.Reuse, "when a recording stands in for a dispatch: `MODE` exact (whole fingerprint), template (input tree ignored) or never (always live)")
}

// validate checks the flag combinations that are usage errors.
func (rf RunFlags) validate(mutations []string) error {
	if rf.Diff && len(mutations) == 0 {
		return usageError("--diff compares an A/B replay: give at least one --mutate ORIG=REPL with it")
	}
	if rf.Jobs < 1 {
		return usageError("--jobs %d: give 1 or more", rf.Jobs)
	}
	if rf.Agent != "" {
		if _, err := newAgent(rf.Agent, nil); err != nil {
			return err
		}
	}
	reuse, err := agent.ParseReuse(rf.Reuse)
	if err != nil {
		return usageError("%s", err.Error())
	}
	if reuse == agent.ReuseNever && strings.TrimSpace(rf.Agent) == agent.SpecRecorded {
		return usageError("--reuse never runs every dispatch live, --agent recorded never runs one: give a live --agent or another --reuse")
	}
	return nil
}

// PlanOptions are the arguments of `replay plan`.
type PlanOptions struct {
	cmdBase
	PipelineFlags
	RunFlags
}

// NewCmdPlan builds `replay plan [PATH]`, the same as `replay --dry-run`.
func NewCmdPlan(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "plan [PATH]",
		Short: "Print the replay plan without changing anything (same as --dry-run)",
		Long: `Print the "Replay Plan (dry-run)" for PATH: where the pipeline crashed, where it
resumes and from which checkpoint, the dispatches to skip and to re-execute, and
the checks a real run makes before writing anything (--templates, --template-ref,
dispatch files to rebuild, templates changed since the run). It accepts every flag
of the main command; a check that would stop the real run is printed and makes the
exit status non-zero. Nothing on disk changes: not a byte.
` + exitStatusFor("plan"),
		Example: `  replay plan
  replay plan ~/.claude/projects/<H>/memory --explain
  replay plan /tmp/crucible-dispatch-<SID>/manifest.jsonl --json
  replay plan --mutate build-reviewer-prompt.md=stricter.md --templates skills/build`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if err := opts.RunFlags.validate(opts.Mutations); err != nil {
				return err
			}
			return runCommand(cmd, &opts.Global, opts, runF, planRun)
		},
	}
	addPipelineFlags(cmd, &opts.PipelineFlags)
	addRunFlags(cmd, &opts.RunFlags)
	cmd.Flags().StringArrayVar(&opts.Overlays, "overlay", nil, "plan as if seq SEQ had answered FILE (`SEQ=FILE`, repeatable; writes nothing)")
	return cmd
}

// addPipelineFlags registers the flags of PipelineFlags on cmd.
func addPipelineFlags(cmd *cobra.Command, pf *PipelineFlags) {
	fl := cmd.Flags()
	fl.StringVar(&pf.FromPhase, "from-phase", "", "resume from the boundary of phase `N` (overrides detection)")
	fl.IntVar(&pf.FromSeq, "from-seq", 0, "resume from the start of the phase containing dispatch seq `N`")
	fl.StringArrayVar(&pf.Mutations, "mutate", nil, "substitute template ORIG with file REPL (`ORIG=REPL`, repeatable)")
	fl.BoolVar(&pf.Explain, "explain", false, "show every check that decided the resume point")
	fl.StringVar(&pf.Repo, "repo", "", "project working tree `DIR` (default: the current directory; a shadow repository of another directory is refused)")
	fl.StringVar(&pf.Scratch, "scratch", "", "scratch directory `DIR` (default: from the pipeline marker)")
	fl.StringVar(&pf.Shadow, "shadow", "", "shadow checkpoint repository `DIR` (default: beside the scratch directory)")
	addProfileFlag(cmd, &pf.Profile)
}

// addProfileFlag registers --profile FILE on cmd.
func addProfileFlag(cmd *cobra.Command, file *string) {
	cmd.Flags().StringVar(file, "profile", "", "pipeline profile: a JSON `FILE` (phases, boundaries, role classes) or a built-in profile name, instead of the one the run's skill names")
}

// decide loads the pipeline and decides the resume point, read-only (see
// resumeflow.Decide). mustRedo names dispatches an A/B replay must re-execute;
// nil for a resume.
func decide(f *runEnv, pf PipelineFlags, mustRedo func(*pipeline.Dispatch) bool) (*resume.Analysis, time.Time, error) {
	d, err := decideDeps(f)
	if err != nil {
		return nil, time.Time{}, err
	}
	return resumeflow.Decide(flowLocate(pf), mustRedo, d)
}

// tmpDir is $TMPDIR, or the system default when it is unset.
func tmpDir(f *runEnv) string {
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
func sysTmpDir(f *runEnv) string {
	if t := f.Getenv(SystemTmpEnv); t != "" {
		return t
	}
	return paths.SystemTmp
}

func planRun(opts *PlanOptions) error {
	f := opts.env()
	var mustRedo func(*pipeline.Dispatch) bool
	var labels []string
	var muts []mutate.Mutation
	if len(opts.Mutations) > 0 {
		cwd, err := f.Getwd()
		if err != nil {
			return err
		}
		if muts, err = mutate.Parse(opts.Mutations, cwd); err != nil {
			return err
		}
		mustRedo, labels = ab.Options{Mutations: muts}.Uses, mutate.Labels(muts)
	}
	a, _, err := decide(f, opts.PipelineFlags, mustRedo)
	if err != nil {
		return err
	}
	reuse := planReuse(f, opts.RunFlags, a, muts)
	plan := resume.BuildPlan(a, labels)
	plan.Reuse = reuse
	markRuns(plan, reuse)
	po := preflightOptions(f, opts.RunFlags, opts.Agent != "" || len(opts.Mutations) > 0, muts)
	// The plan of a resume (not of an A/B replay) also says what the restore will
	// have to ask; the real run refuses in resume.Run with its own words.
	po.Confirm, po.CanPrompt, po.Yes = len(muts) == 0 && opts.TemplateRef == "", f.IO.CanPrompt(), opts.Yes
	pf := resume.RunPreflight(a, po)
	plan.Preflight = pf.Lines
	if err := redispatch.ExternalRefusal(reuse); err != nil && reuse != nil {
		plan.Preflight = append(plan.Preflight, "FAIL "+err.Error())
		if pf.Err == nil {
			// A plan refuses nothing itself: the check fails (exit 1), as the other
			// checks that would stop the run do.
			pf.Err = errors.New(err.Error())
		}
	}
	if f.Global.JSON {
		doc := struct {
			*report.Plan
			Explain []report.ExplainRow `json:"explain,omitempty"`
		}{Plan: plan}
		if opts.Explain {
			doc.Explain = resume.ExplainRows(a)
		}
		if err := report.WriteJSON(f.IO.Out, doc); err != nil {
			return err
		}
		return pf.Err
	}
	if err := report.WritePlan(f.IO.Out, plan, f.TableStyle()); err != nil {
		return err
	}
	if opts.Explain {
		if err := report.WriteExplainAs(f.IO.Out, resume.ExplainRows(a), f.TableStyle()); err != nil {
			return err
		}
	}
	return pf.Err
}

// preflightOptions turns the run flags into the preflight's options; redispatch
// says whether the run re-dispatches work itself.
func preflightOptions(f *runEnv, rf RunFlags, redispatch bool, muts []mutate.Mutation) resume.PreflightOptions {
	cwd, _ := f.Getwd()
	return resume.PreflightOptions{Templates: absPath(cwd, rf.Templates), TemplateRef: rf.TemplateRef, Redispatch: redispatch, Mutations: muts}
}

// preflight runs the checks before a real run writes anything (see
// resumeflow.Preflight): warnings go to stderr, a failure stops the run. muts are
// the --mutate flags of an A/B replay.
func preflight(f *runEnv, a *resume.Analysis, rf RunFlags, redispatch bool, muts ...mutate.Mutation) error {
	return resumeflow.Preflight(a, preflightOptions(f, rf, redispatch, muts), flowPrinter{f})
}
