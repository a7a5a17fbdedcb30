package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdManifest builds `replay manifest`, the dispatch bookkeeping commands.
func NewCmdManifest(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Dispatch bookkeeping: seq, before, after, cleanup",
		Args:  cobra.NoArgs,
	}
	for _, name := range []string{"seq", "before", "after", "cleanup"} {
		cmd.AddCommand(&cobra.Command{
			Use:  name,
			Args: cobra.ArbitraryArgs,
			RunE: func(*cobra.Command, []string) error { return notYetAvailable("replay manifest " + name) },
		})
	}
	return cmd
}
