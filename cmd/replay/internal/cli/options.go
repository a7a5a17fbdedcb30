package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/replaytool/replay/cmd/replay/internal/ui"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/prompt"
)

// globalOptions are the global flags (--now, --json, --quiet, --verbose,
// --format) as one command's invocation parsed them.
type globalOptions struct {
	// Now is the --now flag (RFC 3339), empty when not given.
	Now string
	// JSON, Quiet and Verbose are the output flags.
	JSON    bool
	Quiet   bool
	Verbose bool
	// Format is the --format flag: how tables are drawn (see TableStyle).
	Format tableFormat
}

// addGlobalFlags declares the global flags on fs (the root's persistent flags),
// bound to g.
func addGlobalFlags(fs *pflag.FlagSet, g *globalOptions) {
	fs.StringVar(&g.Now, "now", "", "injected clock, an `RFC3339` time, for every time written to a file or the screen")
	fs.BoolVar(&g.JSON, "json", false, "print one JSON document on stdout instead of text")
	fs.BoolVarP(&g.Quiet, "quiet", "q", false, "print no warnings or progress")
	fs.BoolVarP(&g.Verbose, "verbose", "v", false, "print more detail on stderr")
	fs.Var(&g.Format, "format", "draw tables as markdown (for files and pipes: never cut or wrapped) or text (an ASCII grid; cells wrapped to the terminal width or COLUMNS, one record per block when even narrow columns do not fit); default: text on a terminal, markdown otherwise")
}

// globalsOf reads the global flags cmd was run with (inherited from the root);
// a command built alone, without the root, has none: the zero value.
func globalsOf(cmd *cobra.Command) globalOptions {
	var g globalOptions
	fs := cmd.Flags()
	g.Now, _ = fs.GetString("now")
	g.JSON, _ = fs.GetBool("json")
	g.Quiet, _ = fs.GetBool("quiet")
	g.Verbose, _ = fs.GetBool("verbose")
	if fl := fs.Lookup("format"); fl != nil {
		g.Format = tableFormat(fl.Value.String())
	}
	return g
}

// cmdBase is what every command's options take: the streams, environment,
// working directory and clock from the Factory, and the global flags the command
// was run with. The dependencies only some commands use (the prompter, the
// environment an agent inherits) are fields of those commands' options.
type cmdBase struct {
	IO     *iostreams.IOStreams
	Getenv func(string) string
	Getwd  func() (string, error)
	// Clock is the wall clock (nil: time.Now); Global.Now replaces it.
	Clock  func() time.Time
	Global globalOptions

	// ctx is the context of a tool call of `replay mcp`; nil for a process's own command.
	ctx context.Context
	// printer is built on first use (Printer), or shared when the factory has one.
	printer *ui.Printer
}

// baseOf is the part of a command's options the Factory gives: its dependencies.
// The global flags are set when the command runs (globalsOf).
func baseOf(f *Factory) cmdBase {
	return cmdBase{IO: f.IOStreams, Getenv: f.Getenv, Getwd: f.Getwd, Clock: f.Clock, ctx: f.ctx, printer: f.printer}
}

// env is what the command's run function and its helpers reach through: these
// dependencies and flags, with no prompter and the process's environment for an
// agent.
func (b *cmdBase) env() *runEnv { return &runEnv{cmdBase: b} }

// runEnv is a command's dependencies and global flags as its run function hands
// them to the helpers it shares with other commands. A run function builds it
// from its options (cmdBase.env), never from the Factory.
type runEnv struct {
	*cmdBase
	// Prompter returns the interactive prompter (nil: nobody can be asked); only
	// called when IO.CanPrompt().
	Prompter func() prompt.Prompter
	// Environ returns the environment a command agent inherits; nil means the
	// process's own.
	Environ func() []string
}

// Now returns the injected clock: a fixed time when --now was given, the clock
// otherwise. An unparsable --now is a usage error.
func (b *cmdBase) Now() (func() time.Time, error) {
	if b.Global.Now == "" {
		if b.Clock == nil {
			return time.Now, nil
		}
		return b.Clock, nil
	}
	t, err := time.Parse(time.RFC3339, b.Global.Now)
	if err != nil {
		return nil, usageError("--now %q is not an RFC 3339 time; write it like 2026-04-07T18:00:00Z", b.Global.Now)
	}
	return func() time.Time { return t }, nil
}

// Printer returns the command's one printer, built on first use from the streams
// and the global --quiet, --verbose and --json flags.
func (b *cmdBase) Printer() *ui.Printer {
	if b.printer == nil {
		b.printer = ui.New(b.IO.ErrOut, ui.Options{
			Quiet: b.Global.Quiet, Verbose: b.Global.Verbose, JSON: b.Global.JSON, TTY: b.IO.IsStderrTTY(),
		})
	}
	return b.printer
}

// Warnf prints one warning through the printer: once per distinct text, escaped,
// nothing when --quiet was given.
func (b *cmdBase) Warnf(format string, args ...any) {
	b.Printer().Warnf(format, args...)
}

// baseContext is the context a command's work runs under: the MCP tool call's
// (cancelled when the client cancels the call), else the background.
func (b *cmdBase) baseContext() context.Context {
	if b.ctx == nil {
		return context.Background()
	}
	return b.ctx
}

// environ is the environment a command agent inherits: Environ's, or the
// process's when the command was given none.
func (f *runEnv) environ() []string {
	if f.Environ == nil {
		return os.Environ()
	}
	return f.Environ()
}

// env is resume's dependencies and flags as its helpers take them.
func (opts *ResumeOptions) env() *runEnv {
	return &runEnv{cmdBase: &opts.cmdBase, Prompter: opts.Prompter, Environ: opts.Environ}
}

// env is corpus's dependencies and flags as its helpers take them.
func (opts *CorpusOptions) env() *runEnv {
	return &runEnv{cmdBase: &opts.cmdBase, Environ: opts.Environ}
}

// env is checkpoint restore's dependencies and flags as its helpers take them.
func (opts *CheckpointRestoreOptions) env() *runEnv {
	return &runEnv{cmdBase: &opts.cmdBase, Prompter: opts.Prompter}
}

// runCommand is the tail of every command's RunE: it sets the global flags cmd
// was run with into global (the options' Global), then calls runF when a test
// gave one (to see what the flags parsed into), else run.
func runCommand[O any](cmd *cobra.Command, global *globalOptions, opts *O, runF, run func(*O) error) error {
	*global = globalsOf(cmd)
	if runF != nil {
		return runF(opts)
	}
	return run(opts)
}
