package cli

import (
	"fmt"
	"github.com/replaytool/replay/internal/prompt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/cmd/replay/internal/ui"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/resumeflow"
)

// ResumeOptions are the flags and argument of the main command, `replay [PATH]`.
type ResumeOptions struct {
	cmdBase
	// Prompter asks the user (only when IO.CanPrompt()).
	Prompter func() prompt.Prompter
	// Environ is the environment a command agent inherits (nil: the process's).
	Environ func() []string
	PipelineFlags
	RunFlags
	ReplicaFlags

	DryRun bool
}

// NewCmdResume builds the main command: resume (default) or A/B replay (with --mutate).
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{cmdBase: baseOf(f), Prompter: f.Prompter, Environ: f.Environ}
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

Before any restore, replay takes a pre-restore-safety checkpoint of the whole
working tree and sets refs/replay/pre-restore/<session> at the project's HEAD,
and prints the command that undoes the restore.
` + exitStatusFor(""),
		Example: `  replay
  replay ~/.claude/projects/<H>/memory --yes
  replay --yes --agent 'claude -p'
  replay PATH --mutate build-reviewer-prompt.md=stricter.md --templates skills/build \
    --agent builtin:sim --diff
  replay PATH --mutate build-reviewer-prompt.md=stricter.md --templates skills/build \
    --replicas 5 --jobs 2 --check 'go test ./...' --agent 'builtin:sim?flake=0.1&seed=7'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if err := opts.RunFlags.validate(opts.Mutations); err != nil {
				return err
			}
			opts.ReplicasSet = cmd.Flags().Changed("replicas")
			if err := opts.ReplicaFlags.validate(cmd.Flags().Changed, opts.RunFlags); err != nil {
				return err
			}
			return runCommand(cmd, &opts.Global, opts, runF, resumeRun)
		},
	}
	addPipelineFlags(cmd, &opts.PipelineFlags)
	addRunFlags(cmd, &opts.RunFlags)
	addReplicaFlags(cmd, &opts.ReplicaFlags)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "plan only: print the replay plan and change nothing")
	return cmd
}

func resumeRun(opts *ResumeOptions) error {
	f := opts.env()
	if opts.DryRun {
		return planRun(&PlanOptions{cmdBase: opts.cmdBase, PipelineFlags: opts.PipelineFlags, RunFlags: opts.RunFlags})
	}
	if opts.ReplicasSet {
		return replicasRun(opts)
	}
	if len(opts.Mutations) > 0 || opts.TemplateRef != "" {
		return abRun(opts)
	}
	var ag agent.Agent
	if opts.Agent != "" {
		var err error
		if ag, err = newAgent(opts.Agent, f.environ()); err != nil {
			return err
		}
	}
	d, err := flowDeps(f, ag)
	if err != nil {
		return err
	}
	res, err := resumeflow.Run(f.baseContext(), flowRequest(opts.PipelineFlags, opts.RunFlags), d)
	if err != nil {
		return err
	}
	return writeResume(f, res)
}

// writeResume prints what a resume did: nothing to resume, a fresh start, the
// hand-off, or the re-dispatch; a stopped re-dispatch is an error after its report.
func writeResume(f *runEnv, res *resumeflow.Result) error {
	a := res.Analysis
	pl := a.Pipeline
	switch {
	case res.Restore == nil:
		_, err := fmt.Fprintf(f.IO.Out, "Every dispatch of session %s completed: nothing to resume.\n", pl.Location.SessionID)
		return err
	case res.Restore.StartedFresh:
		return writeStartedFresh(f, pl, res.Restore)
	case f.Global.JSON:
		if err := report.WriteJSON(f.IO.Out, resumeDocument(a, res.Restore, res.Report)); err != nil {
			return err
		}
	case res.Report == nil:
		return writeHandOff(f.IO.Out, a, res.Restore, undoShownAbove(f), f.TableStyle())
	default:
		if err := writeRedispatch(f.IO.Out, a, res.Restore, res.Report, undoShownAbove(f), f.TableStyle()); err != nil {
			return err
		}
	}
	return res.Stopped()
}

// fileProgress is the checkpoint file counter of this command (see
// ui.FileCounter), nil when progress is off (--quiet, --json).
func fileProgress(f *runEnv) checkpoint.FileProgress {
	if !f.Printer().ShowProgress() {
		return nil
	}
	return ui.NewFileCounter(f.Printer().ProgressWriter(), f.IO.IsStderrTTY(), time.Now).Files
}

// newAgent builds the agent --agent names, a command agent inheriting env; a bad
// spec is a usage error.
func newAgent(spec string, env []string) (agent.Agent, error) {
	ag, err := agent.New(spec, agent.Options{Env: env})
	if err != nil {
		return nil, usageError("--agent %s: %v", spec, err)
	}
	return ag, nil
}

// runRedispatch runs the work from the resume point through the agent, recordings in
// store first (see resumeflow.Redispatch); ro carries the session, the working
// tree and, for A/B replays and forks, the transform and entry marks.
func runRedispatch(opts *ResumeOptions, a *resume.Analysis, ag agent.Agent, store *agent.Store, ro redispatch.Options) (*redispatch.Report, error) {
	d, err := flowDeps(opts.env(), ag)
	if err != nil {
		return nil, err
	}
	return resumeflow.Redispatch(opts.baseContext(), a, store, ro, flowRequest(opts.PipelineFlags, opts.RunFlags), d)
}

// loadPipeline reads the pipeline PATH names, read-only.
func loadPipeline(f *runEnv, pf PipelineFlags) (*pipeline.Pipeline, error) {
	env, err := flowEnv(f)
	if err != nil {
		return nil, err
	}
	return resumeflow.Load(flowLocate(pf), env, false)
}

// templateReader reads templates from dir; nil when no dir was given.
func templateReader(dir string) func(string) ([]byte, error) {
	return resumeflow.TemplateReader(dir)
}

// writeRedispatch prints the restore and what each re-dispatch did.
func writeRedispatch(w io.Writer, a *resume.Analysis, res *resume.Result, rep *redispatch.Report, undoAbove bool, style report.TableStyle) error {
	pl := a.Pipeline
	var b strings.Builder
	fmt.Fprintf(&b, "# Resume of session %s (replay session %s)\n\n", pl.Location.SessionID, res.Session)
	writeRestore(&b, resume.BuildPlan(a, nil), res, undoAbove)
	b.WriteString("## Re-dispatch\n\n")
	if _, err := io.WriteString(w, report.SafeText(b.String())); err != nil {
		return err
	}
	if err := writeOutcomes(w, rep, style); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n## What comes next\n\n"+
		"replay re-executed the work items of the crashed part of the run; the phases after it still belong to the pipeline's orchestrator. "+
		"Continue the original skill from its state (`replay state` prints it; inside Claude Code, the replay skill's /replay continues it: docs/claude-code.md), "+
		"and take new seqs with `replay manifest seq` as the pipeline does.\n")
	return err
}

// writeOutcomes prints the table of re-dispatched dispatches and the counts.
func writeOutcomes(w io.Writer, rep *redispatch.Report, style report.TableStyle) error {
	rows := make([][]string, 0, len(rep.Outcomes))
	for _, oc := range rep.Outcomes {
		how := "live"
		if oc.Response.Reused {
			how = "recorded"
		}
		summary := oc.Response.Summary
		if oc.Response.Status != "completed" && oc.Response.Reason != "" {
			summary = oc.Response.Reason
		}
		rows = append(rows, []string{fmt.Sprint(oc.Seq), fmt.Sprint(oc.Original.Seq), oc.Original.Role, oc.Original.TaskLabel(), string(oc.Response.Status), how, style.Cell(summary, 70)})
	}
	if err := style.Write(w, []string{"Seq", "Replay of", "Role", "Task", "Status", "Response", "Summary"}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s: %d live, %d reused from recordings, %d failed.\n", report.Count(len(rep.Outcomes), "dispatch"), rep.Live, rep.Reused, rep.Failed)
	return err
}

// resumeDocument is the --json form of a resume.
func resumeDocument(a *resume.Analysis, res *resume.Result, rep *redispatch.Report) any {
	type restored struct {
		Checkpoint  string `json:"checkpoint"`
		Reason      string `json:"reason"`
		Safety      string `json:"safety_checkpoint"`
		SafetyRef   string `json:"safety_ref"`
		Branch      string `json:"branch"`
		ProjectHead string `json:"project_head"`
		// Commit is the project commit restored when no checkpoint restores
		// the resume point (the undo of attempts that never completed).
		Commit    string `json:"commit,omitempty"`
		Written   int    `json:"written"`
		Removed   int    `json:"removed"`
		Unchanged int    `json:"unchanged"`
		Undo      string `json:"undo"`
		// AlreadyThere: the tree already matched, nothing was restored or saved.
		AlreadyThere bool                       `json:"already_there"`
		Preview      *checkpoint.RestorePreview `json:"preview"`
	}
	doc := struct {
		Plan          *report.Plan `json:"plan"`
		Session       string       `json:"session"`
		Restore       *restored    `json:"restore"`
		KeptDiskState bool         `json:"kept_disk_state"`
		CSB           *report.CSB  `json:"compression_state"`
		Redispatch    []redoneJSON `json:"redispatch,omitempty"`
	}{Plan: resume.BuildPlan(a, nil), Session: res.Session, KeptDiskState: res.KeptDiskState, CSB: res.State.CSB}
	if rep != nil {
		doc.Redispatch = redoneOf(rep)
	}
	if r := res.Restore; r != nil {
		doc.Restore = &restored{
			Checkpoint: r.Checkpoint.Hash.String(), Reason: r.Checkpoint.Reason, SafetyRef: r.SafetyRef,
			Branch: r.Branch, Written: r.Written, Removed: r.Removed, Unchanged: r.Unchanged, Undo: r.UndoCommand,
			AlreadyThere: r.AlreadyThere, Preview: r.Preview,
		}
		if r.Safety != nil {
			doc.Restore.Safety = r.Safety.Hash.String()
		}
		if !r.ProjectHead.IsZero() {
			doc.Restore.ProjectHead = r.ProjectHead.String()
		}
		if !r.Commit.IsZero() {
			doc.Restore.Commit = r.Commit.String()
		}
	}
	return doc
}

// writeHandOff prints what the resume did and what the orchestrator does next.
func writeHandOff(w io.Writer, a *resume.Analysis, res *resume.Result, undoAbove bool, style report.TableStyle) error {
	pl := a.Pipeline
	var b strings.Builder
	fmt.Fprintf(&b, "# Resume of session %s\n\n", pl.Location.SessionID)
	plan := resume.BuildPlan(a, nil)
	writeRestore(&b, plan, res, undoAbove)
	b.WriteString("## Compression State Block\n\n")
	if _, err := io.WriteString(w, report.SafeText(b.String())); err != nil {
		return err
	}
	if err := report.WriteCSB(w, res.State.CSB); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n## Dispatches to re-execute\n\n"); err != nil {
		return err
	}
	rows := make([][]string, 0, len(plan.Redo))
	for _, r := range plan.Redo {
		rows = append(rows, []string{fmt.Sprint(r.Seq), r.Role, r.Phase, r.Task, r.OriginalStatus, r.Template})
	}
	if len(rows) == 0 {
		if _, err := io.WriteString(w, "(none)\n"); err != nil {
			return err
		}
	} else if err := style.Write(w, []string{"Seq", "Role", "Phase", "Task", "Original Status", "Template"}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nNew dispatches start at seq %d. Hand the block above and these dispatches to the pipeline's orchestrator, or run again with --agent CMD; nothing was appended to the manifest.\n", pl.NextSeq)
	return err
}

// undoShownAbove reports whether the restore's log has already put the undo
// command on the terminal the report goes to (stdout and stderr both terminals,
// not --quiet): the report then points at it instead of printing it again. A
// report piped to a file always carries the command.
func undoShownAbove(f *runEnv) bool {
	return !f.Global.Quiet && f.IO.IsStdoutTTY() && f.IO.IsStderrTTY()
}

// writeRestore describes the resume point and what the restore did; undoAbove
// says the undo command is already on screen.
func writeRestore(b *strings.Builder, plan *report.Plan, res *resume.Result, undoAbove bool) {
	fmt.Fprintf(b, "**Crashed at:** %s\n**Resume point:** %s\n**Work preserved:** %s\n\n", plan.CrashedAt, plan.ResumePoint, plan.WorkPreserved)
	for _, line := range plan.FailedVerifications {
		fmt.Fprintf(b, "- Verification failed, resume point moved back: %s\n", line)
	}
	if len(plan.FailedVerifications) > 0 {
		b.WriteString("\n")
	}
	if r := res.Restore; r != nil && r.AlreadyThere {
		fmt.Fprintf(b, "## Restore\n\n- Already at checkpoint %s (%s): the working tree and the branch match it; nothing restored, no safety checkpoint taken.\n\n", r.Checkpoint.Short, r.Checkpoint.Reason)
	} else if r != nil {
		b.WriteString("## Restore\n\n")
		if !r.Commit.IsZero() {
			// no checkpoint for the resume point: the project's commit from
			// before the attempts that never completed
			fmt.Fprintf(b, "- Nothing restores the tree at the resume point: restored project commit %s (%s) to undo what attempts that never completed left: %s written, %d removed, %d unchanged.\n",
				short(r.Commit), r.Checkpoint.Reason, report.Count(r.Written, "file"), r.Removed, r.Unchanged)
		} else {
			fmt.Fprintf(b, "- Restored checkpoint %s (%s, taken %s): %s written, %d removed, %d unchanged.\n",
				r.Checkpoint.Short, r.Checkpoint.Reason, report.Time(r.Checkpoint.Time), report.Count(r.Written, "file"), r.Removed, r.Unchanged)
		}
		if !r.ProjectHead.IsZero() && r.ProjectHead != r.PreviousHead {
			fmt.Fprintf(b, "- Branch %s moved from %s to %s.\n", r.Branch, short(r.PreviousHead), short(r.ProjectHead))
		}
		if r.Safety != nil {
			fmt.Fprintf(b, "- Before that, the whole working tree was saved as checkpoint %s (%s)", r.Safety.Short, r.Safety.Reason)
			if r.SafetyRef != "" {
				fmt.Fprintf(b, " and the previous HEAD as %s", r.SafetyRef)
			}
			b.WriteString(".\n")
		}
		if undoAbove {
			b.WriteString("- Undo: the command printed above, before the restore.\n")
		} else {
			fmt.Fprintf(b, "- Undo: %s\n", r.UndoCommand)
		}
		for _, pc := range plan.Partial {
			fmt.Fprintf(b, "- Partial commit undone (still reachable from %s): %s\n", r.SafetyRef, pc)
		}
		b.WriteString("\n")
	} else if res.KeptDiskState {
		b.WriteString("## Restore\n\n- Nothing restored: resuming on the current disk state.\n\n")
	}
}

// writeStartedFresh reports a fresh start: which markers were archived, how to start
// the pipeline again and how to undo the archiving.
func writeStartedFresh(f *runEnv, pl *pipeline.Pipeline, res *resume.Result) error {
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, struct {
			StartedFresh bool        `json:"started_fresh"`
			Archived     [][2]string `json:"archived"`
			Session      string      `json:"session"`
		}{true, res.Archived, res.Session})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Started fresh (session %s)\n\n", pl.Location.SessionID)
	if len(res.Archived) == 0 {
		b.WriteString("- No marker to archive.\n")
	}
	for _, m := range res.Archived {
		fmt.Fprintf(&b, "- Archived %s as %s (nothing deleted).\n", m[0], m[1])
	}
	skill := pl.Profile.Skill
	if pl.Marker != nil && pl.Marker.Skill != "" {
		skill = pl.Marker.Skill
	}
	fmt.Fprintf(&b, "- Nothing else changed: the working tree, the branch and the dispatch directory %s are as they were.\n", pl.DispatchDir)
	fmt.Fprintf(&b, "\nTo start the pipeline again, run the %s skill in %s from its first phase.\n", skill, pl.ProjectDir)
	if len(res.Archived) > 0 {
		b.WriteString("To undo:")
		for _, m := range res.Archived {
			fmt.Fprintf(&b, " mv %s %s;", m[1], m[0])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(f.IO.Out, b.String())
	return err
}
