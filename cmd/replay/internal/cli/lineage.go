package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/report"
)

// LineageOptions are the arguments of `replay lineage`.
type LineageOptions struct {
	cmdBase
	PipelineFlags
}

// NewCmdLineage builds `replay lineage [PATH]`.
func NewCmdLineage(f *Factory, runF func(*LineageOptions) error) *cobra.Command {
	opts := &LineageOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "lineage [PATH]",
		Short: "Show the tree of runs of a pipeline: original, resumes, A/B sessions and forks",
		Long: `Show the tree of runs of the pipeline at PATH (a run, or one of its forks'
directories): the original run, the resumes and A/B sessions recorded in its
manifest, and its forks (forks of forks under their parent), each with its fork
point, the first seq it does not share with its parent. Nothing on disk changes.
` + exitStatusFor("lineage"),
		Example: `  replay lineage
  replay lineage ~/.claude/projects/<H>/memory --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			return runCommand(cmd, &opts.Global, opts, runF, lineageRun)
		},
	}
	addLocateFlags(cmd, &opts.PipelineFlags)
	return cmd
}

func lineageRun(opts *LineageOptions) error {
	f := opts.env()
	pl, _, err := loadRun(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	tree, warns := fork.Tree(pl)
	markReplicas(tree, replicaArms(pl.DispatchDir))
	for _, w := range warns {
		f.Warnf("%s", w)
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, tree)
	}
	var b strings.Builder
	writeNode(&b, tree, "", "")
	_, err = io.WriteString(f.IO.Out, b.String())
	return err
}

// writeNode prints n and, indented below it, the runs made from it.
func writeNode(b *strings.Builder, n *fork.Node, first, rest string) {
	fmt.Fprintf(b, "%s%s %s", first, n.Session, nodeLabel(n))
	for _, note := range n.Notes {
		fmt.Fprintf(b, " [%s]", report.Safe(note))
	}
	b.WriteString("\n")
	for i, c := range n.Children {
		if i == len(n.Children)-1 {
			writeNode(b, c, rest+"`-- ", rest+"    ")
		} else {
			writeNode(b, c, rest+"|-- ", rest+"|   ")
		}
	}
}

func nodeLabel(n *fork.Node) string {
	switch n.Kind {
	case fork.KindOriginal:
		return fmt.Sprintf("original run (%d dispatches)", n.Dispatches)
	case fork.KindResume:
		return fmt.Sprintf("resume from seq %d (%d dispatches)", n.At, n.Dispatches)
	case fork.KindAB:
		return fmt.Sprintf("A/B replay from seq %d (%d dispatches)", n.At, n.Dispatches)
	}
	s := fmt.Sprintf("fork at seq %d", n.At)
	if len(n.Substitutions) > 0 {
		seqs := make([]string, len(n.Substitutions))
		for i, q := range n.Substitutions {
			seqs[i] = fmt.Sprint(q)
		}
		s += ", substitutes seq " + strings.Join(seqs, ", ")
	}
	if n.Reason != "" {
		s += ": " + report.Safe(n.Reason)
	}
	return s
}
