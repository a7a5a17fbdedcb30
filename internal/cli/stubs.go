package cli

import (
	"github.com/spf13/cobra"
)

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
