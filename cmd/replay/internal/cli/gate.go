package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
)

// GateOptions are the flags and argument of `replay gate`.
type GateOptions struct {
	cmdBase
	PipelineFlags
	Result         string
	FailOn         []string
	MaxRegression  float64
	AllowUndecided bool
}

// NewCmdGate builds `replay gate [PATH]`.
func NewCmdGate(f *Factory, runF func(*GateOptions) error) *cobra.Command {
	opts := &GateOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "gate [PATH]",
		Short: "Turn a finished replicated A/B replay or corpus run into a CI exit code",
		Long: `Read the result of a replicated A/B replay (--replicas N) and exit 1 when it must
not pass: its decision is one of --fail-on (default: reject), it is undecided
(unless --allow-undecided: an undecided experiment has shown nothing), or, with
--max-regression X, the mutated pass rate is more than X below the baseline's or
the deciding metric's mutated median more than X (a fraction: 0.1 is 10%) above
the baseline's. The result is the last line of replay-ab-replicas.jsonl in the
dispatch directory of PATH (the current project's pipeline without PATH), or the
file --result names (a --json document or such a log). A corpus result
(corpus-result.json of replay corpus, or its --json output) is gated on its
aggregate row: the overall decision, the pooled pass rates, and the median change
of the deciding metric over the pipelines. Nothing is written.

The verdicts are exactly adopt, reject and undecided (an older result's skip and
expand are undecided too), lowercase. A result whose
verdict is anything else (Reject, REJECT, rejected, ...), whose pass counts were
edited, or that is cut short is exit 2 naming the file and the value, never a pass.
` + exitStatusFor("gate"),
		Example: `  replay gate
  replay gate ~/.claude/projects/<H>/memory --fail-on reject --allow-undecided
  replay gate --result ab.json --max-regression 0.05 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if !cmd.Flags().Changed("max-regression") {
				opts.MaxRegression = -1
			} else if opts.MaxRegression < 0 {
				return usageError("--max-regression %g: give 0 or more (a fraction: 0.1 is 10%%)", opts.MaxRegression)
			}
			return runCommand(cmd, &opts.Global, opts, runF, gateRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Result, "result", "", "read the result from `FILE` (a --json document or a replay-ab-replicas.jsonl)")
	fl.StringSliceVar(&opts.FailOn, "fail-on", []string{"reject"}, "fail when the decision is one of these `VERDICTS` (reject, undecided, adopt; skip and expand of older results)")
	fl.BoolVar(&opts.AllowUndecided, "allow-undecided", false, "let an undecided experiment pass (by default it fails: it has shown nothing yet)")
	fl.Float64Var(&opts.MaxRegression, "max-regression", 0, "fail when the pass rate drops or the deciding metric rises by more than `X` (a fraction)")
	return cmd
}

// gateRun reads the result, applies the gate and prints its verdict.
func gateRun(opts *GateOptions) error {
	f := opts.env()
	g := replicate.Gate{FailOn: opts.FailOn, MaxRegression: opts.MaxRegression, AllowUndecided: opts.AllowUndecided}
	if err := g.Validate(); err != nil {
		return err
	}
	path, err := resultPath(f, opts.PipelineFlags, opts.Result)
	if err != nil {
		return err
	}
	if corpus.IsResultFile(path) {
		return gateCorpus(f, g, path)
	}
	res, err := replicate.ReadResult(path)
	if err != nil {
		return err
	}
	rep := g.Check(res)
	head := fmt.Sprintf("decision %s over %d replicas per arm (session %s; %s)", rep.Verdict, len(res.Replicas)/2, res.Session, strings.Join(res.Mutations, "; "))
	change := fmt.Sprintf("Pass-rate drop %.3f, median %s change %+.1f%%.", rep.PassRateDrop, rep.Metric, rep.MetricIncrease*100)
	return printGate(f, rep, head, change)
}

// printGate prints a gate's report: one JSON document with --json, else the
// verdict line head, the change line and each failure; a failed gate is an error.
func printGate(f *runEnv, rep replicate.GateReport, head, change string) error {
	if f.Global.JSON {
		if err := report.WriteJSON(f.IO.Out, rep); err != nil {
			return err
		}
		return rep.Err()
	}
	status := "passed"
	if len(rep.Failures) > 0 {
		status = "FAILED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Gate %s: %s.\n%s\n", status, head, change)
	for _, why := range rep.Failures {
		fmt.Fprintf(&b, "- %s\n", why)
	}
	if rep.Rule != "" {
		fmt.Fprintf(&b, "Decided by step %d of the rule: %s\n", rep.Step, rep.Rule)
	}
	if len(rep.Statistics) > 0 {
		b.WriteString("Statistics:\n")
		for _, line := range rep.Statistics {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	if _, err := fmt.Fprint(f.IO.Out, report.SafeText(b.String())); err != nil {
		return err
	}
	return rep.Err()
}

// gateCorpus applies g to the aggregate row of the corpus result at path.
func gateCorpus(f *runEnv, g replicate.Gate, path string) error {
	res, err := corpus.ReadResult(path)
	if err != nil {
		return err
	}
	a := res.Aggregate
	if err := replicate.CheckDecision(path+": aggregate", a.Verdict, a.BaselinePass, a.MutatedPass); err != nil {
		return err
	}
	rep := corpus.Check(g, res)
	head := fmt.Sprintf("corpus decision %s over %d pipelines (%s)", rep.Verdict, res.Aggregate.Pipelines, strings.Join(res.Settings.Mutations, "; "))
	change := fmt.Sprintf("Pooled pass-rate drop %.3f, median %s change over the pipelines %+.1f%%.", rep.PassRateDrop, rep.Metric, rep.MetricIncrease*100)
	return printGate(f, rep, head, change)
}
