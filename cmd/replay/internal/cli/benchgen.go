package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/fixture"
)

// BenchFixtureOptions are the flags of the hidden `replay bench-fixture`.
type BenchFixtureOptions struct {
	Factory    *Factory
	Dir        string
	Dispatches int
	Commits    int
}

// NewCmdBenchFixture builds the hidden `replay bench-fixture`, which generates a
// synthetic crashed pipeline for bench/plan.sh and prints where it is.
func NewCmdBenchFixture(f *Factory) *cobra.Command {
	opts := &BenchFixtureOptions{Factory: f}
	cmd := &cobra.Command{
		Use:    "bench-fixture --dir DIR",
		Short:  "Generate a synthetic crashed pipeline for benchmarks",
		Hidden: true,
		Long: `Generate a synthetic crashed build pipeline in DIR (which must not exist or be
empty): --commits old project commits, then --dispatches dispatches in waves, the
last one in flight. Prints KEY=VALUE lines: project, home, tmp, scratch, now and
the number of commits. Run replay on it with HOME and TMPDIR set to home and tmp.
` + exitStatusFor("bench-fixture"),
		Example: `  replay bench-fixture --dir /tmp/bench --dispatches 2000 --commits 20000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Dir == "" {
				return usageError("bench-fixture: --dir is required")
			}
			p, err := fixture.BuildSynthetic(opts.Dir, fixture.SyntheticOptions{Dispatches: opts.Dispatches, HistoryCommits: opts.Commits})
			if err != nil {
				return usageError("bench-fixture: %v", err)
			}
			_, err = fmt.Fprintf(f.IOStreams.Out, "project=%s\nhome=%s\ntmp=%s\nscratch=%s\nnow=%s\ncommits=%d\n",
				p.Project, p.Home, p.Tmp, p.Scratch, p.Now.UTC().Format(time.RFC3339), opts.Commits+len(p.Commits)-1)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "directory `DIR` to build the pipeline in")
	fl.IntVar(&opts.Dispatches, "dispatches", 2000, "number of dispatches `N` (at least 11)")
	fl.IntVar(&opts.Commits, "commits", 20000, "`N` project commits before the pipeline starts (at least 1)")
	return cmd
}
