package cli

import (
	"fmt"
	"github.com/replaytool/replay/internal/prompt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// CheckpointRestoreOptions are the arguments of `replay checkpoint restore`.
type CheckpointRestoreOptions struct {
	CheckpointOptions
	// Prompter asks the user (only when IO.CanPrompt()).
	Prompter func() prompt.Prompter
	Ref      string
	Scratch  string
	Yes      bool
}

// NewCmdCheckpointRestore builds `replay checkpoint restore <hash|reason> [--yes]`.
func NewCmdCheckpointRestore(f *Factory, runF func(*CheckpointRestoreOptions) error) *cobra.Command {
	opts := &CheckpointRestoreOptions{CheckpointOptions: CheckpointOptions{cmdBase: baseOf(f)}, Prompter: f.Prompter}
	cmd := &cobra.Command{
		Use:   "restore <hash|reason> [--yes]",
		Short: "Make the working tree equal to a checkpoint, safely",
		Long: `Restore the working tree to a checkpoint named by a hash prefix or a reason.

Steps: the branch guard (the pipeline marker's branch must be the current branch);
a confirmation naming the checkpoint's reason, time and branch (--yes answers it; no
terminal and no --yes refuses); a pre-restore-safety checkpoint of the current tree
and of the index (staged changes), the ref refs/replay/pre-restore/<session> at the
project HEAD and refs/replay/index/<session> at the saved index, with the command
that undoes the restore (it brings back the working tree, the index and the
branch); then files are written and removed (ignored files and .git
are left alone), the project branch is moved to the commit the checkpoint was taken
on, the index is updated, and the result is verified against the checkpoint tree.
` + exitStatusFor("checkpoint restore"),
		Example: `  replay checkpoint restore pre-wave-2
  replay checkpoint restore 3f2a9c1d --yes --repo ~/src/app`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return runCommand(cmd, &opts.Global, opts, runF, checkpointRestoreRun)
		},
	}
	addCheckpointFlags(cmd, &opts.CheckpointOptions)
	cmd.Flags().StringVar(&opts.Scratch, "scratch", "", "scratch directory `DIR` holding .pipeline-active (default: $HOME/.claude/projects/<H>/memory)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "answer yes to the confirmation")
	return cmd
}

// readMarker returns what the restore needs of the scratch dir's pipeline marker,
// nil when there is none; an unreadable marker is treated as one without a branch,
// after a warning.
func (o *CheckpointRestoreOptions) readMarker(l *pipeline.Locator) *checkpoint.Marker {
	m, err := l.Marker()
	switch {
	case err != nil:
		o.Warnf("%v; the branch guard cannot check the branch", err)
		return &checkpoint.Marker{}
	case m == nil:
		return nil
	}
	return &checkpoint.Marker{Branch: m.Branch}
}

func checkpointRestoreRun(opts *CheckpointRestoreOptions) error {
	f := opts.env()
	loc, err := opts.locator(opts.Scratch)
	if err != nil {
		return err
	}
	repo, shadow := loc.ProjectDir(), loc.ShadowDir()
	f.Verbosef("project %s; shadow repository %s", repo, shadow)
	note, err := pipeline.GuardShadowProject(shadow, repo)
	if err != nil {
		return err
	}
	if note != "" {
		f.Warnf("%s", note)
	}
	now, err := f.Now()
	if err != nil {
		return err
	}
	s, err := checkpoint.Open(shadow, repo) // the very shadow the guard passed (--scratch's, when given)
	if err != nil {
		return err
	}
	lock, err := checkpoint.LockShadow(s.Shadow())
	if err != nil {
		return err
	}
	defer lock.Release()
	cp, err := s.Find(opts.Ref)
	if err != nil {
		return err
	}
	logw := f.Printer().Log()
	restoring := func() {
		fmt.Fprintf(logw, "Restoring the project directory %s to checkpoint %s (%s).\n", repo, cp.Short, report.Safe(cp.Reason))
	}
	if opts.Yes {
		restoring()
	}
	confirm := checkpoint.Announced(checkpoint.Confirmation(false, askFunc(f)), restoring)
	s.SetFileProgress(fileProgress(f))
	rep, err := s.Restore(*cp, checkpoint.RestoreOptions{
		Session:  strconv.FormatInt(now().Unix(), 10),
		Marker:   opts.readMarker(loc),
		Yes:      opts.Yes,
		Confirm:  confirm,
		NoPrompt: f.IO.NoPromptReason(),
		Now:      now,
		Log:      logw,
	})
	if err != nil {
		return err
	}
	out := f.IO.Out
	if rep.AlreadyThere {
		return writeAlreadyThere(f, rep)
	}
	if f.Global.JSON {
		return report.WriteJSON(out, struct {
			Checkpoint   checkpointJSON `json:"checkpoint"`
			Safety       checkpointJSON `json:"safety"`
			SafetyRef    string         `json:"safety_ref,omitempty"`
			IndexRef     string         `json:"index_ref,omitempty"`
			PreviousHead string         `json:"previous_head,omitempty"`
			ProjectHead  string         `json:"project_head,omitempty"`
			Written      int            `json:"written"`
			Removed      int            `json:"removed"`
			Unchanged    int            `json:"unchanged"`
			Undo         string         `json:"undo"`
			Warnings     []string       `json:"warnings"`
			Preview      any            `json:"preview"`
		}{toJSON(rep.Checkpoint), toJSON(*rep.Safety), rep.SafetyRef, rep.IndexRef, fullHash(rep.PreviousHead), fullHash(rep.ProjectHead),
			rep.Written, rep.Removed, rep.Unchanged, rep.UndoCommand, append([]string{}, rep.Warnings...), rep.Preview})
	}
	fmt.Fprintf(out, "Restored checkpoint %s (%s, taken at %s): %s written, %d removed, %d unchanged.\n",
		cp.Short, report.Safe(cp.Reason), report.Time(cp.Time), report.Count(rep.Written, "file"), rep.Removed, rep.Unchanged)
	if !rep.ProjectHead.IsZero() && rep.ProjectHead != rep.PreviousHead {
		fmt.Fprintf(out, "Project %s is at %s (was %s).\n", displayBranchName(rep.Branch), short(rep.ProjectHead), short(rep.PreviousHead))
	}
	if !undoShownAbove(f) {
		fmt.Fprintf(out, "Undo: %s\n", rep.UndoCommand)
	}
	return nil
}

// writeAlreadyThere reports a restore that had nothing to do.
func writeAlreadyThere(f *runEnv, rep *checkpoint.RestoreReport) error {
	cp := rep.Checkpoint
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, struct {
			Checkpoint   checkpointJSON             `json:"checkpoint"`
			AlreadyThere bool                       `json:"already_there"`
			Preview      *checkpoint.RestorePreview `json:"preview"`
			Warnings     []string                   `json:"warnings"`
		}{toJSON(cp), true, rep.Preview, append([]string{}, rep.Warnings...)})
	}
	_, err := fmt.Fprintf(f.IO.Out, "Already at checkpoint %s (%s): nothing restored, no safety checkpoint taken.\n", cp.Short, report.Safe(cp.Reason))
	return err
}

// fullHash returns the hex of h, empty for the zero hash.
func fullHash(h fmt.Stringer) string {
	if short(h) == "-" {
		return ""
	}
	return h.String()
}

func displayBranchName(b string) string {
	if b == "" {
		return "HEAD"
	}
	return "branch " + b
}
