package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCmdVersion builds `replay version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of replay",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.IOStreams.Out, "replay %s\n", Version)
			return err
		},
	}
}
