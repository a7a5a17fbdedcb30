package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
)

// ReportOptions are the flags and argument of `replay report`.
type ReportOptions struct {
	cmdBase
	PipelineFlags
	Result string
	HTML   string
}

// NewCmdReport builds `replay report [PATH]`.
func NewCmdReport(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "report [PATH]",
		Short: "Render a saved replicated A/B result again, on the screen or as an HTML page",
		Long: `Render the result of a replicated A/B replay (--replicas N) again, without
replaying anything: the report on stdout (markdown, its tables drawn as text
on a terminal: see --format), or with --html FILE one
self-contained HTML page (inline CSS and SVG charts, no script, nothing fetched)
written to FILE, and only there. The result is the last line of
replay-ab-replicas.jsonl in the dispatch directory of PATH (the current
project's pipeline without PATH), or the file --result names (a --json document
or such a log).
` + exitStatusFor("report"),
		Example: `  replay report --html ab.html
  replay report ~/.claude/projects/<H>/memory
  replay report --result ab.json --html ab.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if cmd.Flags().Changed("html") && opts.HTML == "" {
				return usageError("--html is empty: give the file to write, for example --html ab.html")
			}
			return runCommand(cmd, &opts.Global, opts, runF, reportRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Result, "result", "", "read the result from `FILE` (a --json document or a replay-ab-replicas.jsonl)")
	fl.StringVar(&opts.HTML, "html", "", "write the report as one self-contained HTML page to `FILE`")
	return cmd
}

// reportRun reads the saved result and renders it.
func reportRun(opts *ReportOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	html := ""
	if opts.HTML != "" {
		html = absPath(cwd, opts.HTML)
		if err := checkHTMLPath(html); err != nil {
			return err
		}
	}
	path, err := resultPath(f, opts.PipelineFlags, opts.Result)
	if err != nil {
		return err
	}
	res, err := replicate.ReadResult(path)
	if err != nil {
		return err
	}
	if html != "" {
		return writeHTMLReport(f, html, res)
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, res)
	}
	return replicate.WriteReport(f.IO.Out, res, f.TableStyle())
}

// resultPath is the result file a command reads: --result (relative to the
// working directory), else the log beside the pipeline's manifest.
func resultPath(f *runEnv, pf PipelineFlags, result string) (string, error) {
	if result != "" {
		if cwd, err := f.Getwd(); err == nil {
			result = absPath(cwd, result)
		}
		return result, nil
	}
	pl, err := loadPipeline(f, pf)
	if err != nil {
		return "", err
	}
	return filepath.Join(pl.DispatchDir, replicate.JSONLFile), nil
}

// checkHTMLPath refuses an --html path replay cannot replace with a file: a
// directory, or a symbolic link (never written through).
func checkHTMLPath(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return usageError("--html %s is a directory: give a file name, for example %s", report.SafeText(path), report.SafeText(filepath.Join(path, "ab.html")))
	case fi.Mode()&os.ModeSymlink != 0:
		return usageError("--html %s is a symbolic link, which replay never writes through: give another file name", report.SafeText(path))
	}
	return nil
}

// writeHTMLReport writes res as an HTML page to path (replaced atomically) and
// says where.
func writeHTMLReport(f *runEnv, path string, res *replicate.Result) error {
	var page bytes.Buffer
	if err := replicate.WriteHTML(&page, res); err != nil {
		return err
	}
	if err := safewrite.WriteAtomic(path, page.Bytes()); err != nil {
		return fmt.Errorf("--html %s: %w; give a file in a writable directory", path, err)
	}
	f.Printer().Infof("HTML report written to %s.\n", report.SafeText(path))
	return nil
}
