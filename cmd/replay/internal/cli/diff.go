package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/report"
)

// DiffOptions are the arguments of `replay diff`.
type DiffOptions struct {
	cmdBase
	PipelineFlags
	Session string
	// Other is the second run of `replay diff A B`; "" for the A/B comparison.
	Other string
	// Overlays are the --overlay values (SEQ=FILE).
	Overlays []string
}

// validate refuses --session with a second run or --overlay.
func (opts *DiffOptions) validate() error {
	if opts.Session != "" && (opts.Other != "" || len(opts.Overlays) > 0) {
		return usageError("diff: --session picks an A/B session; give it alone, not with a second run or --overlay")
	}
	return nil
}

// diffCommandRun compares what the options name: two runs of one lineage (a
// second run or --overlay), else a run with one of its A/B sessions.
func diffCommandRun(opts *DiffOptions) error {
	if opts.Other != "" || len(opts.Overlays) > 0 {
		return lineageDiffRun(opts)
	}
	return diffRun(opts)
}

// NewCmdDiff builds `replay diff [PATH]`.
func NewCmdDiff(f *Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "diff [PATH] | diff A B [--overlay SEQ=FILE]...",
		Short: "Render the markdown and JSONL comparison of a finished A/B replay",
		Long: `Compare the original run of the pipeline at PATH with one of its replay sessions
(the newest by default); without PATH, the pipeline of the current project: outcome table, per-dispatch comparison matched through
replay_of, first divergence, and the artifact diff between the original run's final
commit (the crashed tip) and the replay's, both as recorded in replay-diff.jsonl
when the replay ran, so the numbers do not change as the branch moves on. Prints
markdown, or with --json the replay-diff JSON line.
Read-only: replay-diff.jsonl files are appended only by 'replay --mutate ... --diff'.

With two runs A and B of one lineage (each a run's PATH or a fork's directory; B
may also be a session id of A's tree of runs, see 'replay lineage'), compare B
with A the same way: dispatches aligned by role, phase and task, the first
divergence and the dispatches of A that follow from it. --overlay SEQ=FILE
compares with the run as it would be had seq SEQ answered FILE (with one run:
the run against itself so overlaid); it writes nothing.
` + exitStatusFor("diff"),
		Example: `  replay diff
  replay diff ~/.claude/projects/<H>/memory --session <SESSION>
  replay diff /tmp/crucible-dispatch-<SID> --json
  replay diff ~/.claude/projects/<H>/memory <FORK-SESSION>
  replay diff --overlay 15=verdict-fail.txt`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) >= 1 {
				opts.Path = args[0]
			}
			if len(args) == 2 {
				opts.Other = args[1]
			}
			if err := opts.validate(); err != nil {
				return err
			}
			return runCommand(cmd, &opts.Global, opts, runF, diffCommandRun)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "replay session `ID` to compare (default: the newest)")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "project working tree `DIR` (default: the current directory; a shadow repository of another directory is refused)")
	cmd.Flags().StringVar(&opts.Scratch, "scratch", "", "scratch directory `DIR` (default: from the pipeline marker)")
	cmd.Flags().StringArrayVar(&opts.Overlays, "overlay", nil, "compare as if seq SEQ had answered FILE (`SEQ=FILE`, repeatable; writes nothing)")
	return cmd
}

func diffRun(opts *DiffOptions) error {
	f := opts.env()
	pl, err := loadPipeline(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	d, warns, err := ab.RecompareSession(pl, opts.Session)
	if err != nil {
		return err
	}
	for _, w := range warns {
		f.Warnf("%s", w)
	}
	return printDiff(f, d)
}

// printDiff prints a replay diff: its JSONL line with --json, else the markdown.
func printDiff(f *runEnv, d *report.ReplayDiff) error {
	if f.Global.JSON {
		line, err := report.DiffJSONLine(d)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f.IO.Out, "%s\n", line)
		return err
	}
	return report.WriteDiff(f.IO.Out, d, f.TableStyle())
}
