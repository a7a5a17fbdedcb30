package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
)

// CorpusOptions are the flags and arguments of `replay corpus`.
type CorpusOptions struct {
	cmdBase
	// Environ is the environment a command agent inherits (nil: the process's).
	Environ   func() []string
	Args      []string
	Out       string
	Mutations []string
	// Shard is --shard K/N as given ("" runs the whole corpus); To is --to URL.
	Shard string
	To    string
	// moreGiven: --more was given; moreWith are the flags given that --more
	// cannot go with.
	moreGiven bool
	moreWith  []string
	RunFlags
	ReplicaFlags
}

// NewCmdCorpus builds `replay corpus DIR|GLOB...`.
func NewCmdCorpus(f *Factory, runF func(*CorpusOptions) error) *cobra.Command {
	opts := &CorpusOptions{cmdBase: baseOf(f), Environ: f.Environ}
	cmd := &cobra.Command{
		Use:   "corpus DIR|GLOB... --mutate ORIG=REPL --out DIR",
		Short: "Run one mutation as a replicated A/B replay over many recorded pipelines",
		Long: `Run the same mutation as a replicated A/B replay (see --replicas) over many
recorded pipelines, one after the other, and sum them up: one row per pipeline
(its decision, pass rates and deciding metric, or the error that stopped it) and
one aggregate row (pooled pass rates with their confidence sequences, the count
of decisions, and an overall decision by the corpus rule the report prints: the
replicas paired within each pipeline, every pipeline's pairs in one
anytime-valid test).

Each DIR is the project working tree of a recorded pipeline; its run is found
under $HOME as replay finds it from inside that directory. A GLOB (quote it) is
expanded by replay; the pipelines run in sorted order.

--out DIR keeps the corpus log (corpus-log.jsonl: every finished pipeline is
appended at once) and the result (corpus-result.json, corpus-result.md). Run the
same command again after a kill and the finished pipelines are skipped; a log of
other arguments is refused. Each pipeline's full replicated report is also written
beside its manifest.

--more N extends the corpus experiment --out DIR holds, never restarts it:
every pipeline gets N more replicas per arm, continuing its own replicated
experiment, and the corpus decision is over all of them (still at most alpha
false decisions, however often it is extended). The design (--replicas,
--until-decided) is the experiment's; --mutate, --agent, --check, --metric and
--margin must be as they were. A --more cut short by a kill is finished by
the same command again before anything is added. Another --out starts a new
experiment.

--shard K/N runs only the K-th of N slices of the corpus (the pipeline at
position i of the sorted corpus belongs to shard i mod N + 1), so N machines
or jobs can share the work; the shard's result goes to the store --to URL (a
directory, file:///dir or s3://bucket/prefix; without --to, the directory
--out itself) as one object, under a key made of the settings and the corpus,
and "replay corpus report --from URL" merges the shards into the report a
single run writes. Each shard keeps its own log in --out, so a killed shard
continues where it stopped. (A pipeline directory named "report" is given as
./report.)
` + exitStatusFor("corpus"),
		Example: `  replay corpus ~/work/svc-a ~/work/svc-b --mutate build-reviewer-prompt.md=stricter.md \
    --templates skills/build --agent 'claude -p' --replicas 5 --out corpus-run
  replay corpus 'runs/*' --mutate build-reviewer-prompt.md=stricter.md --replicas 3 \
    --agent 'builtin:sim?flake=0.1&seed=7' --out corpus-run --json
  replay corpus 'runs/*' --mutate build-reviewer-prompt.md=stricter.md \
    --agent 'builtin:sim?flake=0.1&seed=7' --out corpus-run --more 5
  replay gate --result corpus-run/corpus-result.json --fail-on reject,expand
  replay corpus 'runs/*' --mutate build-reviewer-prompt.md=stricter.md --agent 'claude -p' \
    --shard 2/4 --to s3://replay-ci/corpora --out /tmp/corpus-shard
  replay corpus report --from s3://replay-ci/corpora --out corpus-run`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.moreWith, opts.moreGiven = nil, cmd.Flags().Changed("more")
			for _, name := range []string{"replicas", "until-decided", "max-replicas", "new-experiment"} {
				if cmd.Flags().Changed(name) {
					opts.moreWith = append(opts.moreWith, name)
				}
			}
			if err := opts.validate(); err != nil {
				return err
			}
			return runCommand(cmd, &opts.Global, opts, runF, corpusRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Out, "out", "", "keep the corpus log and result in `DIR` (required)")
	fl.StringArrayVar(&opts.Mutations, "mutate", nil, "substitute template ORIG with file REPL (`ORIG=REPL`, repeatable)")
	fl.StringVar(&opts.Templates, "templates", "", "directory `DIR` of the skill's prompt templates")
	fl.StringVar(&opts.Agent, "agent", "", "re-dispatch with this agent `CMD` (or builtin:sim, 'builtin:sim?flake=RATE&seed=N')")
	fl.DurationVar(&opts.AgentTimeout, "agent-timeout", 30*time.Minute, "stop an agent call after this `DURATION`; 0 means no limit")
	fl.IntVar(&opts.Jobs, "jobs", 1, "run up to `N` replicas of a pipeline at once")
	fl.StringVar(&opts.Shard, "shard", "", "run only the K-th of N slices of the corpus (`K/N`) and put its result into the store")
	fl.StringVar(&opts.To, "to", "", "with --shard: the store `URL` for the shard's result (default: the --out directory)")
	fl.BoolVar(&opts.AllowExternal, "allow-external", false, "let the replays run dispatches of external roles (pushes, deploys, posts) live; without it they must be served from recordings")
	addReplicaFlags(cmd, &opts.ReplicaFlags)
	// The corpus default, set as a default (not as if given: --more refuses
	// a --replicas given with it).
	opts.Replicas = 3
	fl.Lookup("replicas").DefValue = "3"
	fl.Lookup("more").Usage = "add `N` replicas per arm to every pipeline of the corpus experiment --out DIR holds, continuing it"
	cmd.AddCommand(NewCmdCorpusReport(f, nil))
	return cmd
}

// validate checks the flags that need no file: every one a corpus run needs.
func (opts *CorpusOptions) validate() error {
	if opts.Out == "" {
		return usageError("--out DIR is required: the directory that keeps the corpus log and result (a rerun continues from it)")
	}
	if len(opts.Mutations) == 0 {
		return usageError("a corpus compares a mutated arm with the baseline: give --mutate ORIG=REPL")
	}
	if opts.Jobs < 1 {
		return usageError("--jobs %d: give 1 or more", opts.Jobs)
	}
	if opts.NewExperiment {
		return usageError("--new-experiment: a corpus experiment is its --out log; give another --out DIR to start a new one")
	}
	if opts.moreGiven {
		switch {
		case opts.More < 1:
			return usageError("--more %d: give at least 1 replica per arm", opts.More)
		case len(opts.moreWith) > 0:
			return usageError("--more %d with --%s: --more continues the experiment --out holds, with its own design; give --more N alone, or --replicas N with another --out to start a new one", opts.More, opts.moreWith[0])
		case opts.Shard != "":
			return usageError("--more with --shard: a sharded corpus is extended by running it whole (without --shard) into one --out; --more of shards is not supported")
		}
	}
	if opts.To != "" && opts.Shard == "" {
		return usageError("--to URL needs --shard K/N: a whole corpus run writes its result to --out")
	}
	if opts.Shard != "" {
		if _, err := corpus.ParseShard(opts.Shard); err != nil {
			return err
		}
	}
	return nil
}

// corpusRun checks the arguments, then runs corpus.Run with one replicated A/B
// replay per pipeline and prints the result.
func corpusRun(opts *CorpusOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	clock, err := f.Now()
	if err != nil {
		return err
	}
	muts, err := mutate.Parse(opts.Mutations, cwd)
	if err != nil {
		return err
	}
	dirs, err := corpus.Expand(opts.Args, cwd)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(f.baseContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.Printer() // one printer, shared by every pipeline's factory
	one := func(dir string) *ResumeOptions {
		// The pipeline is found as replay finds it run inside dir; --mutate and
		// --templates stay relative to the user's working directory (cwd).
		base := opts.cmdBase
		base.Getwd = func() (string, error) { return dir, nil }
		return &ResumeOptions{cmdBase: base, Environ: opts.Environ, PipelineFlags: PipelineFlags{Mutations: opts.Mutations},
			RunFlags: opts.RunFlags, ReplicaFlags: opts.ReplicaFlags}
	}
	if _, err := replicaRequest(one(dirs[0]), cwd, ctx, clock); err != nil {
		return err
	}
	req := corpus.Request{
		Args: opts.Args, Cwd: cwd, Out: opts.Out, Now: clock(), Ctx: ctx,
		Settings: corpus.Settings{Mutations: opts.Mutations, MutationHash: corpus.MutationHash(muts),
			Replicas: opts.Replicas, UntilDecided: opts.UntilDecided, MaxReplicas: maxReplicas(opts.ReplicaFlags),
			Agent: opts.Agent, Check: opts.Check, Metric: opts.Metric, Margin: opts.Margin, Alpha: opts.Alpha},
		Run: func(ctx context.Context, dir string) (*replicate.Result, string, error) {
			return corpusPipeline(one(dir), cwd, ctx, clock)
		},
		Fatal: fatalForCorpus,
		Info:  func(line string) { f.Printer().Infof("%s", line) },
		More:  opts.More,
		Extend: func(ctx context.Context, dir string, have, add int) (*replicate.Result, string, error) {
			return corpusExtend(one(dir), cwd, ctx, clock, have, add)
		},
	}
	if opts.Shard != "" {
		return corpusShardRun(opts, req)
	}
	res, err := corpus.Run(req)
	if err != nil {
		return err
	}
	return printCorpusResult(f, res)
}

// printCorpusResult prints res as JSON or markdown, then where it was written.
func printCorpusResult(f *runEnv, res *corpus.Result) error {
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, res)
	}
	if err := corpus.WriteReport(f.IO.Out, res, f.TableStyle()); err != nil {
		return err
	}
	if res.Files == nil {
		return nil
	}
	if res.Files.Log == "" {
		_, err := fmt.Fprintf(f.IO.Out, "\nResult written to %s and %s.\n",
			report.SafeText(res.Files.JSON), report.SafeText(res.Files.Markdown))
		return err
	}
	_, err := fmt.Fprintf(f.IO.Out, "\nResult written to %s and %s; the log is %s.\n",
		report.SafeText(res.Files.JSON), report.SafeText(res.Files.Markdown), report.SafeText(res.Files.Log))
	return err
}

func maxReplicas(rf ReplicaFlags) int {
	if rf.UntilDecided {
		return rf.MaxReplicas
	}
	return 0
}

// replicaRequest is the replicated A/B replay of one pipeline, validated.
func replicaRequest(opts *ResumeOptions, cwd string, ctx context.Context, clock func() time.Time) (replicate.Request, error) {
	f := opts.env()
	ag, err := newAgent(opts.Agent, f.environ())
	if opts.Agent == "" {
		ag, err = nil, nil
	}
	if err != nil {
		return replicate.Request{}, err
	}
	r := replicate.Request{
		AB:       abRequest(opts, cwd, ag, ctx, clock),
		Replicas: opts.Replicas, UntilDecided: opts.UntilDecided, MaxReplicas: opts.MaxReplicas,
		Jobs: opts.Jobs, Check: opts.Check, Env: f.environ(), Metric: opts.Metric,
		Rule: opts.rule(), Now: clock(), Ctx: ctx,
		Info: func(line string) { f.Printer().Infof("%s", line) },
	}
	if dir, err := f.Getwd(); err == nil {
		r.Stratum = corpusStratum(cwd, dir)
	}
	return r, replicate.Validate(r)
}

// corpusStratum names the pipeline in dir within a corpus run from cwd: its
// path relative to cwd, slash-separated, so two pipelines of a corpus are never
// one stratum to a seeded simulated agent, and the same corpus laid out the same
// way elsewhere draws the same (see replicate.Request.Stratum).
func corpusStratum(cwd, dir string) string {
	if rel, err := filepath.Rel(cwd, dir); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(dir)
}

// corpusPipeline replays one pipeline of a corpus and writes its own report beside
// its manifest, as a replicated A/B replay does.
func corpusPipeline(opts *ResumeOptions, cwd string, ctx context.Context, clock func() time.Time) (*replicate.Result, string, error) {
	r, err := replicaRequest(opts, cwd, ctx, clock)
	if err != nil {
		return nil, "", err
	}
	return runAndWrite(opts, corpus.PipelineDesign(r))
}

// runAndWrite runs the replicated replay r with this command's progress and
// writes its result beside the pipeline's manifest.
func runAndWrite(opts *ResumeOptions, r replicate.Request) (*replicate.Result, string, error) {
	var stopProgress func()
	r.Progress, stopProgress = replicaProgress(opts.env())
	res, err := replicate.Run(r)
	stopProgress()
	if err != nil {
		return nil, "", err
	}
	pl, err := loadPipeline(opts.env(), opts.PipelineFlags)
	if err != nil {
		return nil, "", err
	}
	if err := replicate.Write(pl.DispatchDir, res); err != nil {
		return nil, "", err
	}
	return res, res.Files.Markdown, nil
}

// corpusExtend adds add replicas per arm to the experiment of have replicas
// per arm that dir's pipeline recorded for the corpus (a new one when have is
// 0), and writes the result beside its manifest.
func corpusExtend(opts *ResumeOptions, cwd string, ctx context.Context, clock func() time.Time, have, add int) (*replicate.Result, string, error) {
	r, err := replicaRequest(opts, cwd, ctx, clock)
	if err != nil {
		return nil, "", err
	}
	r = corpus.ExtendDesign(r, add)
	if have > 0 {
		n, err := replicate.ContinueAt(&r, have)
		if err != nil {
			return nil, "", err
		}
		if n != have {
			return nil, "", fmt.Errorf("its %d replicas per arm of this experiment are not in its %s any more (removed or rewritten?); the corpus cannot be continued without them: start a new experiment with another --out", have, replicate.JSONLFile)
		}
	}
	return runAndWrite(opts, r)
}

// fatalForCorpus reports whether err stops a whole corpus: bad options every
// pipeline would repeat. Anything else about one pipeline becomes its row.
func fatalForCorpus(err error) bool {
	for _, kind := range []error{errUsage, replicate.ErrBadOptions, replicate.ErrInfrastructure, ab.ErrBadOptions, mutate.ErrBadMutation} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}
