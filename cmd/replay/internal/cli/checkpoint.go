package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// CheckpointOptions are the flags every `replay checkpoint` subcommand takes.
type CheckpointOptions struct {
	cmdBase
	// Repo is the project directory (default: the current directory).
	Repo string
	// Shadow is the shadow repository (default: paths.ShadowDir($HOME, Repo)).
	Shadow string
}

// NewCmdCheckpoint builds `replay checkpoint`, the shadow-repository commands.
func NewCmdCheckpoint(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Shadow-repository checkpoints: create, list, show, restore",
		Long: `Checkpoints are snapshots of the whole working tree (untracked files included,
ignored files and .git excluded) kept as commits of a shadow git repository outside
the project, at $HOME/.claude/projects/<H>/checkpoints/<H>/.
` + exitStatusFor("checkpoint"),
		Example: `  replay checkpoint list
  replay checkpoint create --reason pre-wave-1 --source build
  replay checkpoint restore pre-wave-2 --yes`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		NewCmdCheckpointCreate(f, nil),
		NewCmdCheckpointList(f, nil),
		NewCmdCheckpointShow(f, nil),
		NewCmdCheckpointRestore(f, nil),
	)
	return cmd
}

func addCheckpointFlags(cmd *cobra.Command, o *CheckpointOptions) {
	cmd.Flags().StringVar(&o.Repo, "repo", "", "project directory `DIR` (default: the current directory)")
	cmd.Flags().StringVar(&o.Shadow, "shadow", "", "shadow checkpoint repository `DIR` (default: $HOME/.claude/projects/<H>/checkpoints/<H>)")
}

// locator is where this command's project, scratch and shadow directories are.
func (o *CheckpointOptions) locator(scratch string) (*pipeline.Locator, error) {
	cwd, err := o.Getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot find the current directory: %w", err)
	}
	home := o.Getenv("HOME")
	if o.Shadow == "" && home == "" {
		return nil, usageError("HOME is not set; pass the shadow repository with --shadow DIR")
	}
	return &pipeline.Locator{Home: home, Cwd: cwd, Repo: o.Repo, Scratch: scratch, Shadow: o.Shadow}, nil
}

// dirs resolves the project and shadow directories to absolute paths.
func (o *CheckpointOptions) dirs() (repo, shadow string, err error) {
	l, err := o.locator("")
	if err != nil {
		return "", "", err
	}
	o.Verbosef("project %s; shadow repository %s", l.ProjectDir(), l.ShadowDir())
	return l.ProjectDir(), l.ShadowDir(), nil
}

// CheckpointCreateOptions are the arguments of `replay checkpoint create`.
type CheckpointCreateOptions struct {
	CheckpointOptions
	Reason string
	Source string
}

// NewCmdCheckpointCreate builds `replay checkpoint create --reason R [--source S]`.
func NewCmdCheckpointCreate(f *Factory, runF func(*CheckpointCreateOptions) error) *cobra.Command {
	opts := &CheckpointCreateOptions{CheckpointOptions: CheckpointOptions{cmdBase: baseOf(f)}}
	cmd := &cobra.Command{
		Use:   "create --reason R [--source S]",
		Short: "Snapshot the working tree as a checkpoint",
		Long: `Snapshot the whole working tree (untracked files included, the project's
.gitignore rules honoured, .git never) as a shadow commit with subject
"<reason> | <timestamp> | <source>" and a Project-Head trailer, and append its row
to checkpoint-manifest.md. Nothing is created when the tree is unchanged since the
last checkpoint.
` + exitStatusFor("checkpoint create"),
		Example: `  replay checkpoint create --reason pre-wave-1 --source build
  replay checkpoint create --reason manual --repo ~/src/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkpoint.ValidateReason(opts.Reason); err != nil {
				return usageError("%v", err)
			}
			return runCommand(cmd, &opts.Global, opts, runF, checkpointCreateRun)
		},
	}
	addCheckpointFlags(cmd, &opts.CheckpointOptions)
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "checkpoint `REASON`, such as pre-wave-1 (required)")
	cmd.Flags().StringVar(&opts.Source, "source", "manual", "what takes the checkpoint (`SOURCE`), such as build")
	return cmd
}

// checkpointJSON is a checkpoint as --json prints it.
type checkpointJSON struct {
	Hash        string `json:"hash"`
	Short       string `json:"short"`
	Time        string `json:"time"`
	Reason      string `json:"reason"`
	Source      string `json:"source"`
	ProjectHead string `json:"project_head,omitempty"`
	Tree        string `json:"tree"`
	InManifest  bool   `json:"in_manifest"`
}

func toJSON(cp checkpoint.Checkpoint) checkpointJSON {
	j := checkpointJSON{Hash: cp.Hash.String(), Short: cp.Short, Time: cp.Time.UTC().Format(time.RFC3339),
		Reason: cp.Reason, Source: cp.Source, Tree: cp.Tree.String(), InManifest: cp.InManifest}
	if !cp.ProjectHead.IsZero() {
		j.ProjectHead = cp.ProjectHead.String()
	}
	return j
}

func checkpointCreateRun(opts *CheckpointCreateOptions) error {
	f := opts.env()
	repo, shadow, err := opts.dirs()
	if err != nil {
		return err
	}
	// The shadow's own rule first (a planted link on its way is named as such),
	// then the project guard plan, resume and restore run: a shadow of another project
	// (by its core.worktree, its <H> name or its recorded identity) is refused
	// before the lock, the first write.
	checked, err := checkpoint.ProveShadowDir(shadow)
	if err != nil {
		return err
	}
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
	lock, err := checkpoint.LockShadow(checked)
	if err != nil {
		return err
	}
	defer lock.Release()
	s, err := checkpoint.OpenOrInit(checked, repo)
	if err != nil {
		return err
	}
	s.SetFileProgress(fileProgress(f))
	cp, created, err := s.Create(checkpoint.CreateOptions{Reason: opts.Reason, Source: opts.Source, Now: now})
	if err != nil {
		return err
	}
	out := f.IO.Out
	if f.Global.JSON {
		return report.WriteJSON(out, struct {
			Created    bool           `json:"created"`
			Checkpoint checkpointJSON `json:"checkpoint"`
		}{created, toJSON(*cp)})
	}
	if !created {
		fmt.Fprintf(out, "Working tree unchanged since checkpoint %s (%s); no checkpoint created.\n", cp.Short, report.Safe(cp.Reason))
		return nil
	}
	fmt.Fprintf(out, "Created checkpoint %s (%s | %s | %s).\n", cp.Short, report.Safe(cp.Reason), cp.Time.UTC().Format(time.RFC3339), report.Safe(cp.Source)) // the stored commit message, as written
	return nil
}

// openShadow opens an existing shadow repository for a read or a restore.
func (o *CheckpointOptions) openShadow() (*checkpoint.Store, error) {
	repo, shadow, err := o.dirs()
	if err != nil {
		return nil, err
	}
	return checkpoint.Open(shadow, repo)
}

// CheckpointListOptions are the arguments of `replay checkpoint list`.
type CheckpointListOptions struct {
	CheckpointOptions
}

// NewCmdCheckpointList builds `replay checkpoint list [--json]`.
func NewCmdCheckpointList(f *Factory, runF func(*CheckpointListOptions) error) *cobra.Command {
	opts := &CheckpointListOptions{CheckpointOptions: CheckpointOptions{cmdBase: baseOf(f)}}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List checkpoints, oldest first",
		Long: `List every checkpoint of the shadow repository, oldest first: hash, time (UTC),
reason, source and the project commit it was taken on. The shadow commit log is the
source of truth; a missing, truncated or disagreeing checkpoint-manifest.md is
reported as a warning.
` + exitStatusFor("checkpoint list"),
		Example: `  replay checkpoint list
  replay checkpoint list --json --repo ~/src/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, checkpointListRun)
		},
	}
	addCheckpointFlags(cmd, &opts.CheckpointOptions)
	return cmd
}

func short(h fmt.Stringer) string {
	s := h.String()
	if strings.Trim(s, "0") == "" {
		return "-"
	}
	return s[:8]
}

func checkpointListRun(opts *CheckpointListOptions) error {
	f := opts.env()
	s, err := opts.openShadow()
	if err != nil {
		return err
	}
	cps, warnings, err := s.List()
	if err != nil {
		return err
	}
	if f.Global.JSON {
		list := make([]checkpointJSON, len(cps))
		for i, cp := range cps {
			list[i] = toJSON(cp)
		}
		return report.WriteJSON(f.IO.Out, struct {
			Checkpoints []checkpointJSON `json:"checkpoints"`
			Warnings    []string         `json:"warnings"`
		}{list, append([]string{}, warnings...)})
	}
	for _, w := range warnings {
		f.Warnf("%s", w)
	}
	if len(cps) == 0 {
		fmt.Fprintln(f.IO.Out, "No checkpoints yet.")
		return nil
	}
	rows := make([][]string, len(cps))
	for i, cp := range cps {
		rows[i] = []string{cp.Short, report.Time(cp.Time), cp.Reason, cp.Source, short(cp.ProjectHead)}
	}
	return f.TableStyle().Write(f.IO.Out, []string{"HASH", "TIME", "REASON", "SOURCE", "PROJECT HEAD"}, rows)
}

// CheckpointShowOptions are the arguments of `replay checkpoint show`.
type CheckpointShowOptions struct {
	CheckpointOptions
	Ref string
}

// NewCmdCheckpointShow builds `replay checkpoint show <hash|reason>`.
func NewCmdCheckpointShow(f *Factory, runF func(*CheckpointShowOptions) error) *cobra.Command {
	opts := &CheckpointShowOptions{CheckpointOptions: CheckpointOptions{cmdBase: baseOf(f)}}
	cmd := &cobra.Command{
		Use:   "show <hash|reason>",
		Short: "Show one checkpoint and what changed since the one before",
		Long: `Show a checkpoint named by a hash prefix or a reason (the newest of that reason):
its time, reason, source, project commit and tree, and the files added, modified and
deleted since the checkpoint before it.
` + exitStatusFor("checkpoint show"),
		Example: `  replay checkpoint show pre-wave-2
  replay checkpoint show 3f2a9c1d --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return runCommand(cmd, &opts.Global, opts, runF, checkpointShowRun)
		},
	}
	addCheckpointFlags(cmd, &opts.CheckpointOptions)
	return cmd
}

// showLimit is how many changed paths `show` prints before summarising the rest.
const showLimit = 50

func checkpointShowRun(opts *CheckpointShowOptions) error {
	f := opts.env()
	s, err := opts.openShadow()
	if err != nil {
		return err
	}
	cp, err := s.Find(opts.Ref)
	if err != nil {
		return err
	}
	head, err := s.ProjectHeadAt(*cp)
	if err != nil {
		return err
	}
	changes, err := s.Changes(*cp)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, c := range changes {
		counts[c.Action]++
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, struct {
			Checkpoint  checkpointJSON      `json:"checkpoint"`
			ProjectHead string              `json:"project_head_resolved,omitempty"`
			Inferred    bool                `json:"project_head_inferred"`
			Changes     []checkpoint.Change `json:"changes"`
		}{toJSON(*cp), strings.TrimPrefix(short(head), "-"), cp.ProjectHead.IsZero() && !head.IsZero(), changes})
	}
	out := f.IO.Out
	fmt.Fprintf(out, "Checkpoint:   %s\n", cp.Hash)
	fmt.Fprintf(out, "Reason:       %s\n", report.Safe(cp.Reason))
	fmt.Fprintf(out, "Time:         %s\n", report.Time(cp.Time))
	fmt.Fprintf(out, "Source:       %s\n", report.Safe(cp.Source))
	switch {
	case !cp.ProjectHead.IsZero():
		fmt.Fprintf(out, "Project head: %s\n", cp.ProjectHead)
	case !head.IsZero():
		fmt.Fprintf(out, "Project head: %s (inferred: newest project commit not later than the checkpoint)\n", head)
	default:
		fmt.Fprintln(out, "Project head: unknown")
	}
	fmt.Fprintf(out, "Tree:         %s\n", cp.Tree)
	fmt.Fprintf(out, "In manifest:  %t\n", cp.InManifest)
	fmt.Fprintf(out, "\nChanges since the previous checkpoint: %d added, %d modified, %d deleted\n", counts["added"], counts["modified"], counts["deleted"])
	for i, c := range changes {
		if i == showLimit {
			fmt.Fprintf(out, "  ... and %d more\n", len(changes)-showLimit)
			break
		}
		fmt.Fprintf(out, "  %s %s\n", strings.ToUpper(c.Action[:1]), report.Safe(c.Path))
	}
	return nil
}
