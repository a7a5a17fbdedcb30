package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/report"
)

// corpusShardRun runs the shard --shard names of the corpus req describes and
// puts its result into the store --to names (the --out directory without it).
func corpusShardRun(opts *CorpusOptions, req corpus.Request) error {
	f := opts.env()
	sh, err := corpus.ParseShard(opts.Shard)
	if err != nil {
		return err
	}
	url := opts.To
	if url == "" {
		url = absPath(req.Cwd, opts.Out)
		if err := safewrite.MkdirAll(url); err != nil {
			return fmt.Errorf("corpus output %s: %w; give a directory replay can create", url, err)
		}
	}
	st, err := openStore(req.Ctx, f, req.Cwd, url)
	if err != nil {
		return err
	}
	run, err := corpus.RunShard(req, sh, st)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, run.Doc)
	}
	verdicts := map[string]int{}
	for _, r := range run.Doc.Rows {
		verdicts[r.Verdict()]++
	}
	var counts []string
	for _, v := range []string{"adopt", "reject", "skip", "expand", "error"} {
		if verdicts[v] > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", v, verdicts[v]))
		}
	}
	_, err = fmt.Fprintf(f.IO.Out, "Shard %s of corpus run %s: %d of %d pipelines (%s).\nPut into %s as %s; the shard's log is %s.\nWhen every shard is in: replay corpus report --from %s\n",
		sh, run.Doc.Key, len(run.Doc.Rows), len(run.Doc.Corpus), orNothing(strings.Join(counts, ", ")),
		report.SafeText(run.Store), run.Object, report.SafeText(run.Log), report.SafeText(url))
	return err
}

func orNothing(s string) string {
	if s == "" {
		return "nothing to run"
	}
	return s
}

// CorpusReportOptions are the flags of `replay corpus report`.
type CorpusReportOptions struct {
	cmdBase
	From   string
	Key    string
	Shards int
	Out    string
}

// NewCmdCorpusReport builds `replay corpus report --from URL`.
func NewCmdCorpusReport(f *Factory, runF func(*CorpusReportOptions) error) *cobra.Command {
	opts := &CorpusReportOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "report --from URL [--out DIR]",
		Short: "Merge the shards of a sharded corpus run into its report",
		Long: `Read every shard of a corpus run made with "replay corpus --shard K/N --to URL"
from the store, check that shards 1..N are all there and were run with the same
settings over the same corpus, and print the report a single "replay corpus"
run over that corpus prints (the same bytes; --now stamps it). --out DIR also
writes corpus-result.json and corpus-result.md there, for "replay gate".

A missing shard is an error naming it (nothing is written): run that shard
again, then merge again. When the store holds more than one sharded run (other
settings or another corpus), choose one with --settings-key, the key a shard
prints; when it holds one run sharded two ways, choose the count with --shards.
` + exitStatusFor("corpus report"),
		Example: `  replay corpus report --from s3://replay-ci/corpora --out corpus-run
  replay corpus report --from /mnt/shared/corpora --settings-key 4be1c0ffee... --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" {
				return usageError("--from URL is required: the store the shards were put into (a directory, file:///dir or s3://bucket/prefix)")
			}
			if opts.Shards < 0 || opts.Shards > corpus.MaxShards {
				return usageError("--shards %d: give the shard count N of the run (1 to %d)", opts.Shards, corpus.MaxShards)
			}
			return runCommand(cmd, &opts.Global, opts, runF, corpusReportRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the store `URL` the shards were put into (required)")
	fl.StringVar(&opts.Key, "settings-key", "", "merge the sharded run of this `KEY` (needed when the store holds several)")
	fl.IntVar(&opts.Shards, "shards", 0, "merge the run sharded into `N` (needed when it was sharded more than one way)")
	fl.StringVar(&opts.Out, "out", "", "also write corpus-result.json and corpus-result.md into `DIR`")
	return cmd
}

// corpusReportRun merges the shards and prints (and with --out writes) the result.
func corpusReportRun(opts *CorpusReportOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	clock, err := f.Now()
	if err != nil {
		return err
	}
	ctx := f.baseContext()
	st, err := openStore(ctx, f, cwd, opts.From)
	if err != nil {
		return err
	}
	res, err := corpus.Merge(corpus.MergeRequest{Store: st, Key: opts.Key, Shards: opts.Shards, Now: clock(), Ctx: ctx})
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := corpus.WriteResult(absPath(cwd, opts.Out), res); err != nil {
			return err
		}
	}
	return printCorpusResult(f, res)
}
