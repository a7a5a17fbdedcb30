//go:build !replay_bench

package cli

import "github.com/spf13/cobra"

// benchManifestCommands are the manifest subcommands of a replay_bench build
// (manifest_stats.go): none in the shipped binary.
func benchManifestCommands(*Factory) []*cobra.Command { return nil }
