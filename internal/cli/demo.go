package cli

import (
	"github.com/spf13/cobra"
)

// DemoOptions are the flags of `replay demo`.
type DemoOptions struct {
	Factory *Factory
	Dir     string
	Keep    bool
}

// NewCmdDemo builds `replay demo`.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a crashed example pipeline in a temp dir and tour replay on it",
		Long:  "Build the reference crashed pipeline and show status, plan, resume and an A/B replay on it.\n" + exitStatusHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return notYetAvailable("replay demo")
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "build the example here instead of a temp dir")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the temp dir after the tour")
	return cmd
}
