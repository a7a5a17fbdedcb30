package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// ManifestCleanupOptions are the arguments of `replay manifest cleanup`.
type ManifestCleanupOptions struct {
	cmdBase
	Dir     string
	Scratch string
	Failed  bool
}

// NewCmdManifestCleanup builds `replay manifest cleanup --dir D --scratch S [--failed]`.
func NewCmdManifestCleanup(f *Factory, runF func(*ManifestCleanupOptions) error) *cobra.Command {
	opts := &ManifestCleanupOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "cleanup --dir D --scratch S [--failed]",
		Short: "Keep the durable copy of a dispatch directory in the scratch dir",
		Long: "Copy the whole of D into S/<name of D>/, verify every copy, then delete D; with --failed,\n" +
			"keep D. Without --failed, D's manifest.jsonl and receipt-ledger.jsonl must both exist, else it\n" +
			"refuses with exit 1. Copies keep modes and modification times; nothing is written through a\n" +
			"symlink, and symlinks inside D are skipped. A missing D is exit 1 and changes nothing.\n" +
			exitStatusFor("manifest cleanup"),
		Example: `  replay manifest cleanup --dir /tmp/crucible-dispatch-<SID> --scratch ~/.claude/projects/<H>/memory
  replay manifest cleanup --dir /tmp/crucible-dispatch-<SID> --scratch ~/.claude/projects/<H>/memory --failed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, manifestCleanupRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the live dispatch directory `DIR` (required)")
	fl.StringVar(&opts.Scratch, "scratch", "", "the pipeline's scratch directory `DIR` (required)")
	fl.BoolVar(&opts.Failed, "failed", false, "the pipeline failed: copy the whole dispatch directory and keep it")
	_ = cmd.MarkFlagRequired("dir")
	_ = cmd.MarkFlagRequired("scratch")
	acceptFlagPrefixes(cmd)
	return cmd
}

func manifestCleanupRun(opts *ManifestCleanupOptions) error {
	if opts.Scratch == "" {
		return usageError("--scratch is required: the pipeline's scratch directory")
	}
	// The live directory is copied (a link would copy what it leads to, a private
	// folder, into a scratch dir that push shares) and then removed; the scratch dir
	// is written: both through the doors resume uses.
	if err := writableDispatchDir(opts.Getenv("HOME"), opts.Dir); err != nil {
		return err
	}
	if err := pipeline.CheckProjectsDir(opts.Scratch, opts.Getenv("HOME")); err != nil {
		return scriptFail(exitcode.Failure, "replay: %v", err)
	}
	res, err := manifest.Preserve(opts.Dir, opts.Scratch, opts.Failed)
	switch {
	case errors.Is(err, manifest.ErrNoDispatchDir):
		return scriptFail(exitcode.Failure, "dispatch cleanup: dispatch dir missing: %s", shownText(opts.Dir))
	case errors.Is(err, manifest.ErrNoLedger):
		return scriptFail(exitcode.Failure, "dispatch cleanup: both %s and %s must exist before deleting the dispatch dir (refusing)", manifest.ManifestFile, manifest.ReceiptLedgerFile)
	case err != nil:
		return err
	}
	f := opts.env()
	for _, s := range res.Skipped {
		f.Warnf("%s: skipped %s", shownText(opts.Dir), shownText(s))
	}
	out := f.IO.Out
	if f.Global.JSON {
		return report.WriteJSON(out, map[string]any{"dest": res.Dest, "copied": res.Copied, "skipped": res.Skipped, "removed": res.Removed})
	}
	if opts.Failed {
		_, err = fmt.Fprintf(out, "copied dispatch dir to %s (left /tmp in place)\n", shownText(res.Dest))
		return err
	}
	_, err = fmt.Fprintf(out, "copied %s + %s to %s; deleted %s\n", manifest.ManifestFile, manifest.ReceiptLedgerFile, shownText(res.Dest), shownText(opts.Dir))
	return err
}
