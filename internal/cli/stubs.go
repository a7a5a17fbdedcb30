package cli

import (
	"github.com/spf13/cobra"
)

// PlanOptions are the arguments of `replay plan`.
type PlanOptions struct {
	Factory *Factory
	Path    string
}

// NewCmdPlan builds `replay plan [PATH]`, the same as `replay --dry-run`.
func NewCmdPlan(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{Factory: f}
	return &cobra.Command{
		Use:   "plan [PATH]",
		Short: "Print the replay plan without changing anything (same as --dry-run)",
		Long:  "Print the \"Replay Plan (dry-run)\" for PATH without changing a byte.\n" + exitStatusHelp,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return notYetAvailable("replay plan")
		},
	}
}

// StatusOptions are the arguments of `replay status`.
type StatusOptions struct {
	Factory *Factory
	Dir     string
}

// NewCmdStatus builds `replay status [DIR]`.
func NewCmdStatus(f *Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{Factory: f}
	return &cobra.Command{
		Use:   "status [DIR]",
		Short: "List crashed or active pipelines of a project, with their resume point",
		Long:  "List the pipelines of the project at DIR (default: the current directory) whose\n.pipeline-active marker was left behind, with their resume point.\n" + exitStatusHelp,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return notYetAvailable("replay status")
		},
	}
}

// DiffOptions are the arguments of `replay diff`.
type DiffOptions struct {
	Factory *Factory
	Path    string
	Session string
}

// NewCmdDiff builds `replay diff PATH`.
func NewCmdDiff(f *Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "diff PATH",
		Short: "Render the markdown and JSONL comparison of a finished A/B replay",
		Long:  "Render the comparison of original and replayed outcomes for the manifest at PATH.\n" + exitStatusHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return notYetAvailable("replay diff")
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "replay session to compare (default: the newest)")
	return cmd
}
