package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdCheckpoint builds `replay checkpoint`, the shadow-repository commands.
func NewCmdCheckpoint(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Shadow-repository checkpoints: create, list, show, restore",
		Args:  cobra.NoArgs,
	}
	for _, name := range []string{"create", "list", "show", "restore"} {
		cmd.AddCommand(&cobra.Command{
			Use:  name,
			Args: cobra.ArbitraryArgs,
			RunE: func(*cobra.Command, []string) error { return notYetAvailable("replay checkpoint " + name) },
		})
	}
	return cmd
}
