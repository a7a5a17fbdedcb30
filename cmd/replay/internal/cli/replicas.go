package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/stats"
)

// ReplicaFlags are the flags of a replicated A/B replay.
type ReplicaFlags struct {
	Replicas     int
	ReplicasSet  bool
	MaxReplicas  int
	UntilDecided bool
	Check        string
	Metric       string
	// More adds replicas to the experiment these flags identify (--more N);
	// NewExperiment starts a new one instead of continuing it.
	More          int
	NewExperiment bool
	// Alpha and Margin are the decision rule's (see stats.Rule).
	Alpha  float64
	Margin float64
	// HTML is where to write the HTML report too ("" for none).
	HTML string
}

// replicaFlagDefaults are the values of the replica flags not given, on the
// command line and in an MCP tool call alike.
var replicaFlagDefaults = ReplicaFlags{MaxReplicas: 40, Alpha: 0.05, Metric: replicate.MetricDuration}

// addReplicaFlags registers the flags of ReplicaFlags on cmd.
func addReplicaFlags(cmd *cobra.Command, rf *ReplicaFlags) {
	fl := cmd.Flags()
	def := replicaFlagDefaults
	fl.IntVar(&rf.Replicas, "replicas", 0, "with --mutate: replay the baseline and the mutated arm `N` times each and decide with statistics; the same command again adds N more to the same experiment")
	fl.IntVar(&rf.More, "more", 0, "with --mutate: add `N` replicas per arm to the experiment an earlier --replicas run of the same mutation, agent, check and metric started")
	fl.BoolVar(&rf.NewExperiment, "new-experiment", false, "with --replicas: start a new experiment instead of continuing the earlier one with the same mutation, agent, check and metric")
	fl.IntVar(&rf.MaxReplicas, "max-replicas", def.MaxReplicas, "with --until-decided: stop adding replicas at `M` per arm in all")
	fl.BoolVar(&rf.UntilDecided, "until-decided", false, "with --replicas: keep adding replicas while the decision is undecided, up to --max-replicas (the decision stays valid however long it runs)")
	fl.StringVar(&rf.Check, "check", "", "with --replicas: run `CMD` in each replica's worktree; its exit status is the replica's outcome")
	fl.StringVar(&rf.HTML, "html", "", "with --replicas: also write the report as one self-contained HTML page to `FILE`")
	fl.Float64Var(&rf.Alpha, "alpha", def.Alpha, "with --replicas: the chance `A` of a false ADOPT or REJECT between arms that do not differ")
	fl.Float64Var(&rf.Margin, "margin", 0, "with --replicas: reject only a drop significantly beyond `X` (a fraction: pass rate absolute, metric relative)")
	fl.StringVar(&rf.Metric, "metric", def.Metric, "with --replicas: the metric the decision compares (duration_s, gate_rounds, findings, input_chars, output_chars)")
}

// validate checks the replica flags that are usage errors, with the run flags
// they cannot go with; changed says whether a flag was given. --more N is
// --replicas N that must continue an experiment.
func (rf *ReplicaFlags) validate(changed func(name string) bool, run RunFlags) error {
	if changed("more") {
		switch {
		case rf.ReplicasSet:
			return usageError("--more %d with --replicas %d: give --replicas N to start or continue an experiment, or --more N to continue one, not both", rf.More, rf.Replicas)
		case rf.NewExperiment:
			return usageError("--more continues an experiment; --new-experiment starts one: give --replicas N --new-experiment")
		case rf.More < 1:
			return usageError("--more %d: give at least 1 replica per arm", rf.More)
		}
		rf.ReplicasSet, rf.Replicas = true, rf.More
	}
	if rf.ReplicasSet {
		switch {
		case run.TemplateRef != "":
			return usageError("--template-ref with --replicas: the baseline arm replays the recorded bodies, so pinned templates would differ between the arms; give the change as --mutate ORIG=REPL")
		}
		return nil
	}
	for _, name := range []string{"max-replicas", "until-decided", "check", "metric", "html", "alpha", "margin", "new-experiment"} {
		if changed(name) {
			return usageError("--%s belongs to a replicated A/B replay: give --replicas N with it", name)
		}
	}
	return nil
}

// rule is the decision rule the flags ask for.
func (rf ReplicaFlags) rule() stats.Rule {
	r := stats.DefaultRule()
	if rf.Alpha != 0 {
		r.Alpha = rf.Alpha
	}
	r.Margin = rf.Margin
	return r
}

// replicasRun is a replicated A/B replay (see replicate.Run): flags in, one
// use-case call, the report out.
func replicasRun(opts *ResumeOptions) error {
	f := opts.env()
	cwd, ag, err := cwdAndAgent(opts)
	if err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := checkHTMLPath(absPath(cwd, opts.HTML)); err != nil {
			return err
		}
	}
	clock, err := f.Now()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(f.baseContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Diff {
		f.Printer().Infof("--diff with --replicas: the report below compares the arms; 'replay diff --session SESSION' shows one replica against the original run")
	}
	req := replicate.Request{
		AB:       abRequest(opts, cwd, ag, ctx, clock),
		Replicas: opts.Replicas, UntilDecided: opts.UntilDecided, MaxReplicas: opts.MaxReplicas,
		Jobs: opts.Jobs, Check: opts.Check, Env: f.environ(), Metric: opts.Metric,
		Rule: opts.rule(), Now: clock(), Ctx: ctx,
		Info: func(line string) { f.Printer().Infof("%s", line) },
	}
	if !opts.NewExperiment {
		// The same experiment again is continued, never restarted: its evidence
		// is anytime-valid, a fresh start would test again at full alpha.
		n, err := replicate.Continue(&req)
		if err != nil {
			return err
		}
		if n == 0 && opts.More > 0 {
			return usageError("--more %d: no earlier experiment of this mutation, agent, check and metric in this pipeline's %s; start one with --replicas N", opts.More, replicate.JSONLFile)
		}
	}
	progress, stopProgress := replicaProgress(f)
	req.Progress = progress
	res, err := replicate.Run(req)
	stopProgress()
	if errors.Is(err, replicate.ErrInfrastructure) {
		// Recorded, so that `replay gate` fails on it rather than on an older result.
		if pl, lerr := loadPipeline(f, opts.PipelineFlags); lerr == nil {
			_ = replicate.WriteFailure(pl.DispatchDir, pl.Location.SessionID, clock(), err)
		}
	}
	if err != nil {
		return err
	}
	pl, err := loadPipeline(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	if err := replicate.Write(pl.DispatchDir, res); err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeHTMLReport(f, absPath(cwd, opts.HTML), res); err != nil {
			return err
		}
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, res)
	}
	if err := replicate.WriteReport(f.IO.Out, res, f.TableStyle()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(f.IO.Out, "\nReport written to %s and appended to %s.\n", report.SafeText(res.Files.Markdown), report.SafeText(res.Files.JSONL))
	return err
}

// abRequest is the A/B replay each replica runs; its agents run one at a time
// within a replica (--jobs runs replicas at once) and show no live progress.
func abRequest(opts *ResumeOptions, cwd string, ag agent.Agent, ctx context.Context, clock func() time.Time) ab.Request {
	f := opts.env()
	return ab.Request{
		Mutations: opts.Mutations, Cwd: cwd, Templates: absPath(cwd, opts.Templates), TemplateRef: opts.TemplateRef,
		Tmp: tmpDir(f), Agent: ag,
		Decide: func(mustRedo func(*pipeline.Dispatch) bool) (*resume.Analysis, time.Time, error) {
			return decide(f, opts.PipelineFlags, mustRedo)
		},
		Preflight: func(a *resume.Analysis, muts []mutate.Mutation) error {
			return preflight(f, a, opts.RunFlags, true, muts...)
		},
		Redispatch: func(a *resume.Analysis, ag agent.Agent, st *agent.Store, ro redispatch.Options) (*redispatch.Report, error) {
			ro.Log = io.Discard
			// Live, never from recordings: only the replica's own (empty) store,
			// not the pipeline's nor other sessions' that ab.Store adds.
			ro.Runner = &agent.Runner{Agent: ag, Store: st.Own()}
			ro.Jobs, ro.Timeout, ro.Now = 1, opts.AgentTimeout, clock
			ro.AllowExternal = opts.AllowExternal
			ro.Template = templateReader(opts.Templates)
			return redispatch.Run(ctx, a, ro)
		},
		Reload: func() (*pipeline.Pipeline, error) { return loadPipeline(f, opts.PipelineFlags) },
		Warn:   func(w string) { f.Warnf("%s", w) },
	}
}
