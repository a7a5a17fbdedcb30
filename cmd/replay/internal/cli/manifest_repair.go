package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// ManifestRepairOptions are the arguments of `replay manifest repair`.
type ManifestRepairOptions struct {
	cmdBase
	Dir string
}

// NewCmdManifestRepair builds `replay manifest repair --dir D`.
func NewCmdManifestRepair(f *Factory, runF func(*ManifestRepairOptions) error) *cobra.Command {
	opts := &ManifestRepairOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "repair --dir D",
		Short: "Move corrupt manifest lines to a sidecar so that seq recovery works again",
		Long: "Move every corrupt interior line of D/manifest.jsonl (a line that is not a JSON object, other\n" +
			"than the last one) to D/manifest.jsonl.corrupt, and a torn last line to D/manifest.jsonl.torn,\n" +
			"so that `replay manifest seq` and Crucible's own dispatch.py allocate seqs again. Every other\n" +
			"line is kept byte for byte. First the whole manifest is copied to\n" +
			"D/manifest.jsonl.bak-<unix time>, and the command prints how to put it back. Seqs named in the\n" +
			"moved lines are still never handed out again. A manifest with nothing to move is left alone.\n" +
			exitStatusFor("manifest repair"),
		Example: `  replay manifest repair --dir /tmp/crucible-dispatch-<SID>`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, manifestRepairRun)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the dispatch directory `DIR` (required)")
	_ = cmd.MarkFlagRequired("dir")
	acceptFlagPrefixes(cmd)
	return cmd
}

func manifestRepairRun(opts *ManifestRepairOptions) error {
	f := opts.env()
	now, err := f.Now()
	if err != nil {
		return err
	}
	if err := writableDispatchDir(f.Getenv("HOME"), opts.Dir); err != nil {
		return err
	}
	path := filepath.Join(opts.Dir, manifest.ManifestFile)
	res, err := manifest.Repair(path, now())
	if err != nil {
		return err
	}
	out := f.IO.Out
	if f.Global.JSON {
		lines := make([]int, len(res.Moved))
		for i, c := range res.Moved {
			lines[i] = c.Line
		}
		return report.WriteJSON(out, map[string]any{
			"manifest": path, "moved_lines": lines, "torn_bytes": res.TornBytes, "backup": res.Backup,
			"sidecar": res.Sidecar,
		})
	}
	if res.Backup == "" {
		_, err = fmt.Fprintf(out, "%s has no corrupt line: nothing to repair\n", shownText(path))
		return err
	}
	if len(res.Moved) > 0 {
		nums := make([]string, len(res.Moved))
		for i, c := range res.Moved {
			nums[i] = fmt.Sprint(c.Line)
		}
		fmt.Fprintf(out, "moved %d corrupt line(s) (line %s) to %s\n", len(res.Moved), strings.Join(nums, ", "), shownText(res.Sidecar))
	}
	if res.TornBytes > 0 {
		fmt.Fprintf(out, "moved the torn last line (%d bytes) to %s\n", res.TornBytes, shownText(filepath.Join(opts.Dir, manifest.TornSidecar)))
	}
	_, err = fmt.Fprintf(out, "the manifest as it was: %s\nundo: cp %s %s\n", shownText(res.Backup), quoteArgs([]string{shownText(res.Backup)})[0], quoteArgs([]string{shownText(path)})[0])
	return err
}
