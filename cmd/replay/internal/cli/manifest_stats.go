//go:build replay_bench

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// The hidden `replay manifest stats` is a benchmark and debugging command: it is
// built only with -tags replay_bench (bench/manifest.sh builds it so), never into
// the shipped binary.

func init() {
	commandCodes["manifest stats"] = []int{0, 1, 2, 4}
}

// benchManifestCommands are the manifest subcommands of a replay_bench build.
func benchManifestCommands(f *Factory) []*cobra.Command {
	return []*cobra.Command{NewCmdManifestStats(f, nil)}
}

// ManifestStatsOptions are the arguments of the hidden `replay manifest stats`.
type ManifestStatsOptions struct {
	cmdBase
	Path string
}

// NewCmdManifestStats builds the hidden `replay manifest stats PATH`: read, dedupe and
// count a manifest (bench/manifest.sh; a replay_bench build only).
func NewCmdManifestStats(f *Factory, runF func(*ManifestStatsOptions) error) *cobra.Command {
	opts := &ManifestStatsOptions{cmdBase: baseOf(f)}
	return &cobra.Command{
		Use:     "stats PATH",
		Short:   "Read a manifest tolerantly and print its counts",
		Long:    "Resolve PATH like `replay`, read the manifest, dedupe it by seq and print the counts.\n" + exitStatusFor("manifest stats"),
		Example: `  replay manifest stats /tmp/crucible-dispatch-<SID>/manifest.jsonl --json`,
		Hidden:  true,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return runCommand(cmd, &opts.Global, opts, runF, manifestStatsRun)
		},
	}
}

func manifestStatsRun(opts *ManifestStatsOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	loc, err := manifest.Resolve(opts.Path, manifest.ResolveOptions{Home: f.Getenv("HOME"), Tmp: f.Getenv("TMPDIR"), Cwd: cwd})
	if err != nil {
		return err
	}
	for _, n := range loc.Notes {
		f.Warnf("%s", n)
	}
	m, err := manifest.Read(loc.ManifestPath)
	if m != nil {
		for _, w := range m.Warnings {
			f.Warnf("%s: %s", loc.ManifestPath, w)
		}
	}
	if err != nil {
		return err
	}
	next, err := manifest.NextSeqAfter(m, loc.DispatchDir)
	if err != nil {
		return err
	}
	s := m.Stats
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, map[string]any{
			"manifest": loc.ManifestPath, "lines": s.Lines, "valid": s.Valid, "corrupt": s.Corrupt,
			"torn_tail": s.TornTail, "torn_seq": s.TornSeq, "entries": len(m.Entries), "max_seq": m.MaxSeq, "next_seq": next,
		})
	}
	_, err = fmt.Fprintf(f.IO.Out, "manifest %s\nlines %d\nvalid %d\ncorrupt %d\ntorn_tail %t\nentries %d\nmax_seq %d\nnext_seq %d\n",
		loc.ManifestPath, s.Lines, s.Valid, s.Corrupt, s.TornTail, len(m.Entries), m.MaxSeq, next)
	return err
}
