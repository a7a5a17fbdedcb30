package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
)

// NewCmdManifest builds `replay manifest`, the dispatch bookkeeping commands.
func NewCmdManifest(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Dispatch bookkeeping: seq, before, after, cleanup",
		Long: "Dispatch bookkeeping for a disk-mediated pipeline, a drop-in for the pipeline's own tool:\n" +
			"seq prints the next seq, before and after append the two lines of a dispatch's lifecycle\n" +
			"(one atomic, locked, fsync'd write each), cleanup keeps the durable copy in the scratch dir.\n" +
			exitStatusHelp,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		NewCmdManifestSeq(f, nil),
		NewCmdManifestBefore(f, nil),
		NewCmdManifestAfter(f, nil),
		NewCmdManifestCleanup(f, nil),
		NewCmdManifestStats(f, nil),
	)
	return cmd
}

// ManifestSeqOptions are the arguments of `replay manifest seq`.
type ManifestSeqOptions struct {
	Factory *Factory
	Dir     string
}

// NewCmdManifestSeq builds `replay manifest seq --dir D`.
func NewCmdManifestSeq(f *Factory, runF func(*ManifestSeqOptions) error) *cobra.Command {
	opts := &ManifestSeqOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "seq --dir D",
		Short: "Print the next seq of a dispatch directory",
		Long: "Print one more than every seq ever used in D: valid manifest entries, a seq readable in a\n" +
			"torn or corrupt line, and the <N>- prefixes of dispatch and output files.\n" + exitStatusHelp,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return manifestSeqRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the dispatch directory (required)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

func manifestSeqRun(opts *ManifestSeqOptions) error {
	if err := requireDir(opts.Dir); err != nil {
		return err
	}
	n, err := manifest.NextSeq(opts.Dir)
	if err != nil {
		return err
	}
	out := opts.Factory.IOStreams.Out
	if opts.Factory.JSON {
		return json.NewEncoder(out).Encode(map[string]int{"next_seq": n})
	}
	_, err = fmt.Fprintln(out, n)
	return err
}

// requireDir checks a --dir argument names an existing directory.
func requireDir(dir string) error {
	if dir == "" {
		return usageError("--dir is required: the dispatch directory")
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usageError("--dir %s: no such directory; create the dispatch directory first", dir)
	}
	return nil
}

// ManifestBeforeOptions are the arguments of `replay manifest before`.
type ManifestBeforeOptions struct {
	Factory   *Factory
	Dir       string
	Seq       int
	File      string
	Role      string
	Phase     string
	Task      string
	ModelTier string
}

// NewCmdManifestBefore builds `replay manifest before`.
func NewCmdManifestBefore(f *Factory, runF func(*ManifestBeforeOptions) error) *cobra.Command {
	opts := &ManifestBeforeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "before --dir D --seq N --file F --role R [--phase P] [--task K] --model-tier T",
		Short: "Append the dispatched entry of a dispatch",
		Long: "Append {\"status\":\"dispatched\"} for seq N to D/manifest.jsonl. input_chars is the number of\n" +
			"characters of the dispatch file D/F (null when the file does not exist).\n" + exitStatusHelp,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return manifestBeforeRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the dispatch directory (required)")
	fl.IntVar(&opts.Seq, "seq", 0, "the dispatch's seq, from `replay manifest seq` (required)")
	fl.StringVar(&opts.File, "file", "", "the dispatch file name inside --dir, <N>-<template>.md (required)")
	fl.StringVar(&opts.Role, "role", "", "the subagent role, e.g. build-implementer (required)")
	fl.StringVar(&opts.Phase, "phase", "", "the pipeline phase (default null)")
	fl.StringVar(&opts.Task, "task", "", "the task number (default null)")
	fl.StringVar(&opts.ModelTier, "model-tier", "", "the model tier, e.g. opus (required)")
	for _, name := range []string{"dir", "seq", "file", "role", "model-tier"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func manifestBeforeRun(opts *ManifestBeforeOptions) error {
	if err := requireDir(opts.Dir); err != nil {
		return err
	}
	if opts.Seq < 0 {
		return usageError("--seq %d: want a seq of 0 or more", opts.Seq)
	}
	if opts.Role == "" || opts.ModelTier == "" {
		return usageError("--role and --model-tier must not be empty")
	}
	path, err := manifest.SafeJoin(opts.Dir, opts.File)
	if err != nil {
		return usageError("--file: %v", err)
	}
	e := manifest.Entry{Seq: opts.Seq, File: opts.File, Role: opts.Role, Status: manifest.StatusDispatched, ModelTier: &opts.ModelTier}
	if opts.Phase != "" && opts.Phase != "null" {
		e.Phase = &opts.Phase
	}
	if e.Task, err = parseTask(opts.Task); err != nil {
		return err
	}
	if e.InputChars, err = countChars(path); err != nil {
		return err
	}
	return appendAndShow(opts.Factory, opts.Dir, e)
}

func parseTask(s string) (*int, error) {
	if s == "" || s == "null" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return nil, usageError("--task %q: want a task number", s)
	}
	return &n, nil
}

// countChars returns the number of characters (runes) of a file, nil when it is missing.
func countChars(path string) (*int, error) {
	data, err := runfile.ReadFile(path, runfile.Dispatch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the dispatch file: %w", path, err)
	}
	n := utf8.RuneCount(data)
	return &n, nil
}

func appendAndShow(f *Factory, dir string, e manifest.Entry) error {
	if err := manifest.Append(filepath.Join(dir, manifest.ManifestFile), e); err != nil {
		return err
	}
	if f.JSON {
		line, err := manifest.EncodeLine(e)
		if err != nil {
			return err
		}
		_, err = f.IOStreams.Out.Write(line)
		return err
	}
	return nil
}

// ManifestAfterOptions are the arguments of `replay manifest after`.
type ManifestAfterOptions struct {
	Factory     *Factory
	Dir         string
	Seq         int
	Status      string
	Summary     *string
	OutputChars *int
	ToolCalls   *int
	Duration    *float64
}

// NewCmdManifestAfter builds `replay manifest after`.
func NewCmdManifestAfter(f *Factory, runF func(*ManifestAfterOptions) error) *cobra.Command {
	opts := &ManifestAfterOptions{Factory: f}
	var summary string
	var outputChars, toolCalls int
	var duration float64
	cmd := &cobra.Command{
		Use:   "after --dir D --seq N --status completed|failed|error|skipped [--summary S] [--output-chars C] [--tool-calls K] [--duration S]",
		Short: "Append the completion entry of a dispatch",
		Long: "Append how seq N ended to D/manifest.jsonl, copying file, role, phase, task, input_chars\n" +
			"and model_tier from its last dispatched entry. A summary too long for one atomic line is\n" +
			"cut and ends in \"...\".\n" + exitStatusHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if fl.Changed("summary") {
				opts.Summary = &summary
			}
			if fl.Changed("output-chars") {
				opts.OutputChars = &outputChars
			}
			if fl.Changed("tool-calls") {
				opts.ToolCalls = &toolCalls
			}
			if fl.Changed("duration") {
				opts.Duration = &duration
			}
			if runF != nil {
				return runF(opts)
			}
			return manifestAfterRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the dispatch directory (required)")
	fl.IntVar(&opts.Seq, "seq", 0, "the seq given to `before` (required)")
	fl.StringVar(&opts.Status, "status", "", "completed, failed, error or skipped (required)")
	fl.StringVar(&summary, "summary", "", "one-line summary of the outcome")
	fl.IntVar(&outputChars, "output-chars", 0, "characters of the subagent's output")
	fl.IntVar(&toolCalls, "tool-calls", 0, "number of tool calls the subagent made")
	fl.Float64Var(&duration, "duration", 0, "wall-clock seconds the dispatch took")
	for _, name := range []string{"dir", "seq", "status"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func manifestAfterRun(opts *ManifestAfterOptions) error {
	if err := requireDir(opts.Dir); err != nil {
		return err
	}
	status := manifest.Status(strings.TrimSpace(opts.Status))
	if status == manifest.StatusDispatched {
		return usageError("--status dispatched: `after` records how a dispatch ended; record the dispatch itself with `replay manifest before`")
	}
	if !status.Final() {
		return usageError("--status %q: want completed, failed, error or skipped", opts.Status)
	}
	if d := opts.Duration; d != nil && (*d < 0 || math.IsNaN(*d) || math.IsInf(*d, 0)) {
		return usageError("--duration %v: want seconds, 0 or more", *d)
	}
	for name, v := range map[string]*int{"--output-chars": opts.OutputChars, "--tool-calls": opts.ToolCalls} {
		if v != nil && *v < 0 {
			return usageError("%s %d: want 0 or more", name, *v)
		}
	}
	path := filepath.Join(opts.Dir, manifest.ManifestFile)
	if _, err := os.Stat(path); err != nil {
		return usageError("%s: no manifest; record the dispatch of seq %d with `replay manifest before` first", path, opts.Seq)
	}
	d, err := manifest.FindLast(path, func(e *manifest.Entry) bool {
		return e.Seq == opts.Seq && e.Status == manifest.StatusDispatched
	})
	if err != nil {
		return err
	}
	if d == nil {
		return usageError("%s: seq %d has no dispatched entry; record it with `replay manifest before` first", path, opts.Seq)
	}
	e := manifest.Entry{
		Seq: opts.Seq, File: d.File, Role: d.Role, Phase: d.Phase, Task: d.Task, Status: status,
		DurationS: opts.Duration, Summary: opts.Summary, InputChars: d.InputChars, OutputChars: opts.OutputChars,
		ModelTier: d.ModelTier, ToolCalls: opts.ToolCalls,
		ReplayOf: d.ReplayOf, ReplaySession: d.ReplaySession, Mutation: d.Mutation,
	}
	return appendAndShow(opts.Factory, opts.Dir, e)
}

// ManifestCleanupOptions are the arguments of `replay manifest cleanup`.
type ManifestCleanupOptions struct {
	Factory *Factory
	Dir     string
	Scratch string
	Failed  bool
}

// NewCmdManifestCleanup builds `replay manifest cleanup --dir D --scratch S [--failed]`.
func NewCmdManifestCleanup(f *Factory, runF func(*ManifestCleanupOptions) error) *cobra.Command {
	opts := &ManifestCleanupOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "cleanup --dir D --scratch S [--failed]",
		Short: "Keep the durable copy of a dispatch directory in the scratch dir, then remove it",
		Long: "Copy D's manifest.jsonl and receipt-ledger.jsonl (with --failed, every file of D) into\n" +
			"S/crucible-dispatch-<sid>/, verify each copy, and only then remove D.\n" + exitStatusHelp,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return manifestCleanupRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the live dispatch directory (required)")
	fl.StringVar(&opts.Scratch, "scratch", "", "the pipeline's scratch directory (required)")
	fl.BoolVar(&opts.Failed, "failed", false, "the pipeline failed: keep every file of the dispatch directory")
	_ = cmd.MarkFlagRequired("dir")
	_ = cmd.MarkFlagRequired("scratch")
	return cmd
}

func manifestCleanupRun(opts *ManifestCleanupOptions) error {
	if err := requireDir(opts.Dir); err != nil {
		return err
	}
	if opts.Scratch == "" {
		return usageError("--scratch is required: the pipeline's scratch directory")
	}
	res, err := manifest.Preserve(opts.Dir, opts.Scratch, opts.Failed)
	if err != nil {
		return err
	}
	f := opts.Factory
	for _, s := range res.Skipped {
		f.Warnf("%s: skipped %s", opts.Dir, s)
	}
	out := f.IOStreams.Out
	if f.JSON {
		return json.NewEncoder(out).Encode(map[string]any{"dest": res.Dest, "copied": res.Copied, "skipped": res.Skipped, "removed": res.Removed})
	}
	what := strings.Join(res.Copied, ", ")
	if opts.Failed {
		what = fmt.Sprintf("%d files", len(res.Copied))
	}
	fmt.Fprintf(out, "Copied %s to %s\n", what, res.Dest)
	_, err = fmt.Fprintf(out, "Removed %s\n", res.Removed)
	return err
}

// ManifestStatsOptions are the arguments of the hidden `replay manifest stats`.
type ManifestStatsOptions struct {
	Factory *Factory
	Path    string
}

// NewCmdManifestStats builds the hidden `replay manifest stats PATH`: read, dedupe and
// count a manifest (used by bench/manifest.sh and for debugging damaged files).
func NewCmdManifestStats(f *Factory, runF func(*ManifestStatsOptions) error) *cobra.Command {
	opts := &ManifestStatsOptions{Factory: f}
	return &cobra.Command{
		Use:    "stats PATH",
		Short:  "Read a manifest tolerantly and print its counts",
		Long:   "Resolve PATH like `replay`, read the manifest, dedupe it by seq and print the counts.\n" + exitStatusHelp,
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return manifestStatsRun(opts)
		},
	}
}

func manifestStatsRun(opts *ManifestStatsOptions) error {
	f := opts.Factory
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	loc, err := manifest.Resolve(opts.Path, manifest.ResolveOptions{Home: f.Getenv("HOME"), Tmp: f.Getenv("TMPDIR"), Cwd: cwd})
	if err != nil {
		return err
	}
	for _, n := range loc.Notes {
		f.Warnf("%s", n)
	}
	m, err := manifest.Read(loc.ManifestPath)
	if m != nil {
		for _, w := range m.Warnings {
			f.Warnf("%s: %s", loc.ManifestPath, w)
		}
	}
	if err != nil {
		return err
	}
	next, err := manifest.NextSeqAfter(m, loc.DispatchDir)
	if err != nil {
		return err
	}
	s := m.Stats
	if f.JSON {
		return json.NewEncoder(f.IOStreams.Out).Encode(map[string]any{
			"manifest": loc.ManifestPath, "lines": s.Lines, "valid": s.Valid, "corrupt": s.Corrupt,
			"torn_tail": s.TornTail, "torn_seq": s.TornSeq, "entries": len(m.Entries), "max_seq": m.MaxSeq, "next_seq": next,
		})
	}
	_, err = fmt.Fprintf(f.IOStreams.Out, "manifest %s\nlines %d\nvalid %d\ncorrupt %d\ntorn_tail %t\nentries %d\nmax_seq %d\nnext_seq %d\n",
		loc.ManifestPath, s.Lines, s.Valid, s.Corrupt, s.TornTail, len(m.Entries), m.MaxSeq, next)
	return err
}
