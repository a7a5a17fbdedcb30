package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/verify"
)

// VerifyOptions are the flags and argument of `replay verify`.
type VerifyOptions struct {
	cmdBase
	PipelineFlags
	Strict bool
	Agent  string
}

// NewCmdVerify builds `replay verify [PATH]`.
func NewCmdVerify(f *Factory, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "verify [PATH]",
		Short: "Classify the recordings of a pipeline's dispatches as valid, stale or absent",
		Long: `For every dispatch of the pipeline at PATH (the current project's without PATH)
that has a dispatch file, look its recording up and classify it: valid (a replay
reuses it), stale (a fingerprint input changed: its role, model tier, the agent
--agent names, or its input tree is no longer in the project repository), absent
(nothing recorded) or corrupt (unreadable, or it fails its integrity check).
With --strict the command fails when any recording is not valid. Nothing is
written.
` + exitStatusFor("verify"),
		Example: `  replay verify
  replay verify ~/.claude/projects/<H>/memory --strict --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			return runCommand(cmd, &opts.Global, opts, runF, verifyRun)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Strict, "strict", false, "exit 5 when any recording is stale, absent or corrupt")
	fl.StringVar(&opts.Agent, "agent", "", "a recording made by another agent than `CMD` is stale")
	return cmd
}

// verifyRun classifies the recordings and prints the verdicts.
func verifyRun(opts *VerifyOptions) error {
	f := opts.env()
	pl, err := loadPipeline(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	rep, err := verify.Run(pl, verify.Options{Agent: opts.Agent})
	if err != nil {
		return err
	}
	if f.Global.JSON {
		if err := report.WriteJSON(f.IO.Out, rep); err != nil {
			return err
		}
	} else if err := writeVerify(f, rep); err != nil {
		return err
	}
	if opts.Strict {
		return rep.Err()
	}
	return nil
}

func writeVerify(f *runEnv, rep *verify.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Recordings in %s\n\n", rep.DispatchDir)
	for _, it := range rep.Items {
		fmt.Fprintf(&b, "  seq %-4d %-40s %-8s", it.Seq, it.Dispatch, it.Class)
		if it.Reason != "" {
			fmt.Fprintf(&b, " %s", it.Reason)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%d dispatches: %d valid, %d stale, %d absent, %d corrupt.\n", len(rep.Items),
		rep.Counts[verify.Valid], rep.Counts[verify.Stale], rep.Counts[verify.Absent], rep.Counts[verify.Corrupt])
	_, err := fmt.Fprint(f.IO.Out, report.SafeText(b.String()))
	return err
}
