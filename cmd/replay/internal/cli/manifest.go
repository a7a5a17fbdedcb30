package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// NewCmdManifest builds `replay manifest`, the dispatch bookkeeping commands.
func NewCmdManifest(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Dispatch bookkeeping: seq, before, after, cleanup, repair",
		Long: "Dispatch bookkeeping for a disk-mediated pipeline, a drop-in for the pipeline's own tool:\n" +
			"seq prints the next seq, before and after append the two lines of a dispatch's lifecycle\n" +
			"(one atomic, locked, fsync'd write each), cleanup keeps the durable copy in the scratch dir.\n" +
			exitStatusFor("manifest"),
		Example: `  N=$(replay manifest seq --dir "$DISPATCH_DIR")
  replay manifest before --dir "$DISPATCH_DIR" --seq "$N" --file "$N-build-implementer.md" --role build-implementer --model-tier opus`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		NewCmdManifestSeq(f, nil),
		NewCmdManifestBefore(f, nil),
		NewCmdManifestAfter(f, nil),
		NewCmdManifestCleanup(f, nil),
		NewCmdManifestRepair(f, nil),
	)
	cmd.AddCommand(benchManifestCommands(f)...)
	return cmd
}

// ManifestSeqOptions are the arguments of `replay manifest seq`.
type ManifestSeqOptions struct {
	cmdBase
	Dir string
}

// NewCmdManifestSeq builds `replay manifest seq --dir D`.
func NewCmdManifestSeq(f *Factory, runF func(*ManifestSeqOptions) error) *cobra.Command {
	opts := &ManifestSeqOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "seq --dir D",
		Short: "Print the next seq of a dispatch directory",
		Long: "Print one more than every seq ever used in D: valid manifest entries, a seq readable in a\n" +
			"torn or corrupt line, and the <N>- prefixes of dispatch and output files (1 when D or its\n" +
			"manifest does not exist), and a seq readable in the sidecars of lines replay moved aside. A\n" +
			"corrupt line other than the last one is allowed when a whole seq can be read in it (a complete\n" +
			"\"seq\": N, or the N- of a dispatch file name): the next free seq is still known, and a warning\n" +
			"names the line. Otherwise it refuses (exit 1), like Crucible's scripts/dispatch.py, and names\n" +
			"`replay manifest repair`, which moves such lines to a sidecar.\n" + exitStatusFor("manifest seq"),
		Example: `  replay manifest seq --dir /tmp/crucible-dispatch-<SID>`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, manifestSeqRun)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the dispatch directory `DIR` (required)")
	_ = cmd.MarkFlagRequired("dir")
	acceptFlagPrefixes(cmd)
	return cmd
}

func manifestSeqRun(opts *ManifestSeqOptions) error {
	f := opts.env()
	path := filepath.Join(opts.Dir, manifest.ManifestFile)
	corrupt, err := manifest.InteriorCorruptLines(path)
	if err != nil {
		return err
	}
	top := 0
	for _, c := range corrupt {
		if !c.HasSeq {
			return scriptFail(exitcode.Failure, "dispatch seq: %d interior corrupt line(s) in manifest.jsonl — seq recovery unsafe, refusing to allocate (line %d names no seq; run 'replay manifest repair --dir %s' to move it to a sidecar)",
				len(corrupt), c.Line, shownText(opts.Dir))
		}
		top = max(top, c.Seq)
	}
	for _, c := range corrupt {
		f.Warnf("%s: line %d is corrupt; it names seq %d, so the next free seq is still known (run 'replay manifest repair --dir %s' so that Crucible's own dispatch.py allocates again)",
			path, c.Line, c.Seq, opts.Dir)
	}
	n, err := manifest.NextSeq(opts.Dir)
	if err != nil {
		return err
	}
	n = max(n, top+1)
	out := f.IO.Out
	if f.Global.JSON {
		return report.WriteJSON(out, map[string]int{"next_seq": n})
	}
	_, err = fmt.Fprintln(out, n)
	return err
}

// ManifestBeforeOptions are the arguments of `replay manifest before`.
type ManifestBeforeOptions struct {
	cmdBase
	Dir string
	Seq int
	// File is the dispatch file as given: absolute, or relative to the working directory.
	File string
	Role string
	// Phase and Task are nil when not given (null in the manifest).
	Phase *string
	Task  *int
	// ModelTier is the free-form model label (opus, standard, provider/custom-model),
	// nil when not given (null in the manifest).
	ModelTier *string
	// Convention is --convention: auto (the manifest's own), older or newer.
	Convention string
}

// NewCmdManifestBefore builds `replay manifest before`.
func NewCmdManifestBefore(f *Factory, runF func(*ManifestBeforeOptions) error) *cobra.Command {
	opts := &ManifestBeforeOptions{cmdBase: baseOf(f)}
	var seq, task pyInt
	var phase, tier string
	cmd := &cobra.Command{
		Use:   "before --dir D --seq N --file F --role R [--phase P] [--task K] [--model-tier LABEL]",
		Short: "Append the dispatched entry of a dispatch",
		Long: "Append {\"status\":\"dispatched\"} for seq N to D/manifest.jsonl and print\n" +
			"\"dispatched seq N (<file>, <chars> chars)\". F is the dispatch file, absolute or relative to the\n" +
			"working directory; the manifest records its base name and input_chars, its length in characters\n" +
			"(null, with a warning, when it cannot be read as UTF-8 text). The line follows the convention\n" +
			"of the manifest it extends (docs/upstream.md). In the newer one (and in a new manifest)\n" +
			"--model-tier takes any label: it is recorded as model_tier with its neutral model_profile\n" +
			"(opus → high, sonnet and standard → standard, haiku → low, any other label → null); without\n" +
			"it both are null. In the older one (Crucible's dispatch.py at 31fd5ec) lines have no\n" +
			"model_profile and a tier other than opus, sonnet or haiku is refused (exit 2). A label too\n" +
			"long for one atomic line is recorded as null. A flag this replay does not know (a newer\n" +
			"Crucible's) is named in a warning and ignored.\n" + exitStatusFor("manifest before"),
		Example: `  replay manifest before --dir /tmp/crucible-dispatch-<SID> --seq 7 --file 7-build-implementer.md \
    --role build-implementer --phase 3 --task 2 --model-tier opus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Seq = int(seq.value)
			opts.Task = task.ptr()
			if cmd.Flags().Changed("phase") {
				opts.Phase = &phase
			}
			if cmd.Flags().Changed("model-tier") {
				opts.ModelTier = &tier
			}
			return runCommand(cmd, &opts.Global, opts, runF, manifestBeforeRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the dispatch directory `DIR` (required)")
	fl.Var(&seq, "seq", "the dispatch's seq `N`, as printed by replay manifest seq (required)")
	fl.StringVar(&opts.File, "file", "", "the dispatch `FILE` <N>-<template>.md, absolute or relative to the working directory (required)")
	fl.StringVar(&opts.Role, "role", "", "the subagent `ROLE`, e.g. build-implementer (required)")
	fl.StringVar(&phase, "phase", "", "the pipeline `PHASE` (default null)")
	fl.Var(&task, "task", "the task number `K` (default null)")
	fl.StringVar(&tier, "model-tier", "", "the model `LABEL`: opus, sonnet, haiku, standard or any other (default null)")
	conventionFlag(cmd, &opts.Convention)
	for _, name := range []string{"dir", "seq", "file", "role"} {
		_ = cmd.MarkFlagRequired(name)
	}
	acceptFlagPrefixes(cmd)
	tolerateUnknownFlags(f, cmd)
	return cmd
}

func manifestBeforeRun(opts *ManifestBeforeOptions) error {
	f := opts.env()
	if opts.Seq < 0 || opts.Seq > manifest.MaxSeq {
		return usageError("--seq %d: want a seq from 0 to %d", opts.Seq, manifest.MaxSeq)
	}
	if err := writableDispatchDir(f.Getenv("HOME"), opts.Dir); err != nil {
		return err
	}
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	chars, warning := manifest.CountInputChars(cwd, opts.File)
	if warning != "" && !f.Global.Quiet {
		fmt.Fprintln(f.IO.ErrOut, shownText(warning))
	}
	// The older convention's script refuses a tier it does not know, after
	// measuring the file, as here; the newer one takes any label.
	conv, err := lineConvention(opts.Convention, filepath.Join(opts.Dir, manifest.ManifestFile))
	if err != nil {
		return err
	}
	if conv == manifest.ConventionOlder && opts.ModelTier != nil && !slices.Contains(manifest.OlderModelTiers, *opts.ModelTier) {
		return scriptFail(exitcode.Usage, "dispatch before: model-tier must be one of %s", pyList(manifest.OlderModelTiers))
	}
	base := opts.File[strings.LastIndex(opts.File, "/")+1:]
	e := manifest.Entry{
		Seq: opts.Seq, File: base, Role: opts.Role, Phase: opts.Phase, Task: opts.Task,
		Status: manifest.StatusDispatched, InputChars: chars, ModelTier: opts.ModelTier,
		Extra: map[string]json.RawMessage{manifest.KeyModelProfile: manifest.RawText(manifest.ModelProfile(opts.ModelTier))},
	}
	return appendAndShow(f, opts.Dir, e, conv, fmt.Sprintf("dispatched seq %d (%s, %s chars)", e.Seq, shownText(base), nullOr(chars)))
}

// writableDispatchDir refuses a --dir the bookkeeping commands must not write
// into, through the doors resume and A/B replays use: a dispatch directory that
// is a symbolic link (D is the pipeline's $DISPATCH_DIR, which Crucible makes
// with mkdir, so a link there was planted), or one reached through a link below
// ~/.claude/projects (a durable copy in a linked scratch dir).
// The refusal is exit 1, the failure code of the script these commands replace.
func writableDispatchDir(home, dir string) error {
	err := pipeline.CheckDispatchDir(dir, "")
	if err == nil {
		err = pipeline.CheckProjectsDir(dir, home)
	}
	if err != nil {
		return scriptFail(exitcode.Failure, "replay: %v", err)
	}
	return nil
}

// pyList renders words as Python prints a sorted list of strings.
func pyList(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = pyQuote(w)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// appendAndShow appends e and prints the script's line, or the manifest line with --json.
// A torn last line that the append moved aside is named in a warning.
func appendAndShow(f *runEnv, dir string, e manifest.Entry, conv manifest.Convention, text string) error {
	e = conv.Shape(e)
	res, err := manifest.AppendEntryAs(filepath.Join(dir, manifest.ManifestFile), e, conv)
	if err != nil {
		return err
	}
	if res.SetAside > 0 {
		f.Warnf("%s: its torn last line (%d bytes) was moved to %s before the append, so that seq recovery keeps working", filepath.Join(dir, manifest.ManifestFile), res.SetAside, res.Sidecar)
	}
	if f.Global.JSON {
		line, err := manifest.EncodeLine(e)
		if err != nil {
			return err
		}
		_, err = f.IO.Out.Write(line)
		return err
	}
	_, err = fmt.Fprintln(f.IO.Out, text)
	return err
}

// conventionFlag adds --convention to an appending command.
func conventionFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "convention", "auto", "write the line as `auto` (the manifest's own convention), older (Crucible's dispatch.py at 31fd5ec) or newer")
}

// lineConvention resolves --convention for the manifest at path: auto is the
// manifest's own convention (a new manifest's is newer).
func lineConvention(name, path string) (manifest.Convention, error) {
	conv, ok := manifest.ParseConvention(name)
	if !ok {
		return conv, usageError("--convention %q: want auto, older or newer", name)
	}
	if conv != manifest.ConventionAuto {
		return conv, nil
	}
	return manifest.DetectConvention(path)
}

// ManifestAfterOptions are the arguments of `replay manifest after`.
type ManifestAfterOptions struct {
	cmdBase
	Dir    string
	Seq    int
	Status string
	// Summary, OutputChars, ToolCalls and Duration are nil when not given.
	Summary     *string
	OutputChars *int
	ToolCalls   *int
	Duration    *int
	// ActualModel is the model the subagent actually ran on, nil when not given.
	ActualModel *string
	// Convention is --convention: auto (the manifest's own), older or newer.
	Convention string
}

// finalStatuses are the statuses `after` accepts, sorted as the script lists them.
var finalStatuses = []string{"completed", "error", "failed", "replayed", "skipped"}

// NewCmdManifestAfter builds `replay manifest after`.
func NewCmdManifestAfter(f *Factory, runF func(*ManifestAfterOptions) error) *cobra.Command {
	opts := &ManifestAfterOptions{cmdBase: baseOf(f)}
	var summary, actualModel string
	var seq, outputChars, toolCalls, duration pyInt
	cmd := &cobra.Command{
		Use:   "after --dir D --seq N --status completed|failed|error|skipped|replayed [--summary S] [--output-chars C] [--tool-calls K] [--duration S] [--actual-model M]",
		Short: "Append the completion entry of a dispatch",
		Long: "Append how seq N ended to D/manifest.jsonl and print \"<status> seq N (<file>)\", copying\n" +
			"file, role, phase, task, input_chars and model_tier from its last dispatched entry; without one\n" +
			"it refuses (exit 1). replayed marks a dispatch that a replay re-executed. A summary too long\n" +
			"for one atomic line is cut and ends in \"...\". --duration is whole seconds. --actual-model M records\n" +
			"the model the subagent actually ran on as actual_model (null without it, or when too long for one\n" +
			"line); model_profile is copied too (or derived from model_tier when the dispatched line has none).\n" +
			"In a manifest of Crucible's older convention (dispatch.py at 31fd5ec) neither is written.\n" +
			"A flag this replay does not know (a newer Crucible's) is named in a warning and ignored.\n" + exitStatusFor("manifest after"),
		Example: `  replay manifest after --dir /tmp/crucible-dispatch-<SID> --seq 7 --status completed \
    --summary "task 2 done" --output-chars 5400 --tool-calls 31 --duration 412`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("summary") {
				opts.Summary = &summary
			}
			if cmd.Flags().Changed("actual-model") {
				opts.ActualModel = &actualModel
			}
			opts.Seq = int(seq.value)
			opts.OutputChars, opts.ToolCalls, opts.Duration = outputChars.ptr(), toolCalls.ptr(), duration.ptr()
			return runCommand(cmd, &opts.Global, opts, runF, manifestAfterRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the dispatch directory `DIR` (required)")
	fl.Var(&seq, "seq", "the seq `N` given to before (required)")
	fl.StringVar(&opts.Status, "status", "", "the outcome `STATUS`: completed, failed, error, skipped or replayed (required)")
	fl.StringVar(&summary, "summary", "", "one-line `SUMMARY` of the outcome")
	fl.Var(&outputChars, "output-chars", "`CHARS` of the subagent's output")
	fl.Var(&toolCalls, "tool-calls", "number of tool calls `K` the subagent made")
	fl.Var(&duration, "duration", "wall-clock `SECONDS` the dispatch took (a whole number)")
	fl.StringVar(&actualModel, "actual-model", "", "the `MODEL` the subagent actually ran on")
	conventionFlag(cmd, &opts.Convention)
	for _, name := range []string{"dir", "seq", "status"} {
		_ = cmd.MarkFlagRequired(name)
	}
	acceptFlagPrefixes(cmd)
	tolerateUnknownFlags(f, cmd)
	return cmd
}

func manifestAfterRun(opts *ManifestAfterOptions) error {
	if !slices.Contains(finalStatuses, opts.Status) {
		return scriptFail(exitcode.Usage, "dispatch after: status must be one of %s", pyList(finalStatuses))
	}
	if opts.Seq < 0 || opts.Seq > manifest.MaxSeq {
		return usageError("--seq %d: want a seq from 0 to %d", opts.Seq, manifest.MaxSeq)
	}
	if err := validDuration(opts.Duration); err != nil {
		return err
	}
	if err := writableDispatchDir(opts.Getenv("HOME"), opts.Dir); err != nil {
		return err
	}
	path := filepath.Join(opts.Dir, manifest.ManifestFile)
	conv, err := lineConvention(opts.Convention, path)
	if err != nil {
		return err
	}
	line, err := manifest.FindDispatched(path, opts.Seq)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	if line == nil {
		return scriptFail(exitcode.Failure, "dispatch after: no dispatched entry for seq %d — refusing to fabricate a completion record", opts.Seq)
	}
	copied, err := manifest.CopyContext(line)
	if err != nil {
		return fmt.Errorf("%s: the dispatched line of seq %d: %w; fix that field, then record the completion again", path, opts.Seq, err)
	}
	// Replay's own provenance fields, when the dispatched line is a valid entry.
	var d manifest.Entry
	if parsed, perr := manifest.ParseLine(line); perr == nil {
		d = parsed
	}
	if _, ok := copied[manifest.KeyModelProfile]; !ok {
		copied[manifest.KeyModelProfile] = manifest.RawText(manifest.ModelProfile(d.ModelTier))
	}
	copied[manifest.KeyActualModel] = manifest.RawText(opts.ActualModel)
	if opts.ActualModel != nil && conv == manifest.ConventionOlder {
		opts.Warnf("replay manifest after: ignoring --actual-model: %s follows Crucible's older convention (dispatch.py at 31fd5ec), whose lines have no actual_model", path)
	}
	var duration *float64
	if opts.Duration != nil {
		seconds := float64(*opts.Duration)
		duration = &seconds
	}
	e := manifest.Entry{
		Seq: opts.Seq, File: d.File, Role: d.Role, Phase: d.Phase, Task: d.Task, Status: manifest.Status(opts.Status),
		DurationS: duration, Summary: opts.Summary, InputChars: d.InputChars, OutputChars: opts.OutputChars,
		ModelTier: d.ModelTier, ToolCalls: opts.ToolCalls,
		ReplayOf: d.ReplayOf, ReplaySession: d.ReplaySession, Mutation: d.Mutation,
		Extra: copied,
	}
	return appendAndShow(opts.env(), opts.Dir, e, conv, fmt.Sprintf("%s seq %d (%s)", opts.Status, opts.Seq, shownText(manifest.PyText(copied["file"]))))
}
