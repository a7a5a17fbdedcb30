package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// StateOptions are the arguments of `replay state`.
type StateOptions struct {
	cmdBase
	PipelineFlags
	At int
}

// NewCmdState builds `replay state [PATH] --at SEQ`.
func NewCmdState(f *Factory, runF func(*StateOptions) error) *cobra.Command {
	opts := &StateOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "state [PATH] --at SEQ",
		Short: "Show the pipeline as it was when dispatch SEQ was sent (read-only)",
		Long: `Show the run at PATH as of the moment dispatch SEQ was sent, mid-wave included:
the phase map with each dispatch's status then (completed, or still in flight),
the last boundary with everything before it complete and the checkpoint in effect,
the project commits after that checkpoint and the files they changed, and the
Compression State Block reconstructed as of that seq. Nothing on disk changes.
` + exitStatusFor("state"),
		Example: `  replay state --at 12
  replay state /tmp/crucible-dispatch-<SID>/manifest.jsonl --at 7 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if !cmd.Flags().Changed("at") {
				return usageError("state: give --at SEQ, the seq to look at")
			}
			return runCommand(cmd, &opts.Global, opts, runF, stateRun)
		},
	}
	cmd.Flags().IntVar(&opts.At, "at", 0, "the dispatch `SEQ` to look at the run from")
	addLocateFlags(cmd, &opts.PipelineFlags)
	return cmd
}

func stateRun(opts *StateOptions) error {
	f := opts.env()
	pl, session, err := loadRun(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	if err := forkPrefixOnly(pl, session, opts.At); err != nil {
		return err
	}
	s, err := resume.StateAt(pl, opts.At, tmpDir(f))
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, s)
	}
	return writeSnapshot(f.IO.Out, s)
}

// writeSnapshot prints a state at a seq as markdown.
func writeSnapshot(w io.Writer, s *resume.Snapshot) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# State at seq %d (%s)\n\n", s.At, report.Time(s.Time))
	fmt.Fprintf(&b, "Boundary: %s\n", s.Boundary)
	if s.Checkpoint != nil {
		fmt.Fprintf(&b, "Checkpoint in effect: %s %s (%s)\n", s.Checkpoint.Short, report.Safe(s.Checkpoint.Reason), report.Time(s.Checkpoint.Time))
	} else {
		b.WriteString("Checkpoint in effect: none\n")
	}
	if s.Head != "" {
		fmt.Fprintf(&b, "Project commit: %s\n", s.Head)
	}
	b.WriteString("\n## Phase map\n\n")
	for _, p := range s.Phases {
		fmt.Fprintf(&b, "Phase %s %s\n", report.Safe(p.Phase), report.Safe(p.Name))
		for _, d := range p.Dispatches {
			line := fmt.Sprintf("  seq %d %s %s", d.Seq, report.Safe(d.Role), report.Safe(d.Task))
			if d.Wave > 0 {
				line += fmt.Sprintf(" wave %d", d.Wave)
			}
			fmt.Fprintf(&b, "%s: %s\n", strings.TrimRight(line, " "), d.Status)
		}
	}
	fmt.Fprintf(&b, "\n## Files changed since the checkpoint (%d commits)\n\n", len(s.Commits))
	if len(s.FilesChanged) == 0 {
		b.WriteString("none\n")
	}
	for _, p := range s.FilesChanged {
		fmt.Fprintf(&b, "- %s\n", report.Safe(p))
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s", report.Safe(warn))
	}
	b.WriteString("\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return report.WriteCSB(w, s.CSB)
}

// forkPrefixOnly refuses the state of a fork at or after its fork seq: below it, a
// fork is its original run; from it on, its own entries are not reconstructed.
func forkPrefixOnly(pl *pipeline.Pipeline, session string, at int) error {
	if session == "" {
		return nil
	}
	l, err := fork.Chain(pl, session)
	if err != nil {
		return err
	}
	if first := l.FirstForkSeq(); at >= first {
		return errkind.Errorf(fork.ErrBadFork, "state of fork %s: seqs from %d on are the fork's own, which state does not reconstruct; give --at below %d, or the original run's PATH", session, first, first)
	}
	return nil
}
