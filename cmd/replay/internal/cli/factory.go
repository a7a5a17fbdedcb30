package cli

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/replaytool/replay/cmd/replay/internal/ui"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/prompt"
)

// Factory hands every command what it needs from the outside world, so tests can
// replace each piece: streams, prompter, clock, environment and working directory.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Prompter returns the interactive prompter; only called when IOStreams.CanPrompt().
	Prompter func() prompt.Prompter
	Getenv   func(string) string
	Getwd    func() (string, error)
	// Environ returns the environment a command agent inherits (KEY=VALUE pairs);
	// nil means the process's own.
	Environ func() []string

	// NowFlag is the value of the global --now flag (RFC 3339), empty when not given.
	NowFlag string
	// JSON, Quiet and Verbose are the global output flags.
	JSON    bool
	Quiet   bool
	Verbose bool
	// Format is the global --format flag: how tables are drawn (see TableStyle).
	Format tableFormat

	wallClock func() time.Time
	printer   *ui.Printer
	// envMapped is set once Getenv reads REPLAY_HOME and REPLAY_TMPDIR (mapEnv).
	envMapped bool
	// ctx is the context of a tool call of `replay mcp`; nil for a process's own command.
	ctx context.Context
}

// NewFactory returns the factory of a real process.
func NewFactory() *Factory {
	ios := iostreams.System()
	return &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return &prompt.Huh{Plain: os.Getenv("NO_COLOR") != ""} },
		Getenv:    os.Getenv,
		Getwd:     os.Getwd,
		Environ:   os.Environ,
		wallClock: time.Now,
	}
}

// HomeEnv and TmpEnv name the environment variables that stand for HOME and
// TMPDIR in replay alone: where replay looks for Claude Code's per-project state
// (checkpoints, memory, scratch) and for the live dispatch directories. They let
// a pipeline kept under another home (the crashed example of `replay demo
// --crashed`) be read by a replay that Claude Code starts, without changing the
// HOME of Claude Code itself (its login and settings live there).
const (
	HomeEnv = "REPLAY_HOME"
	TmpEnv  = "REPLAY_TMPDIR"
)

// mapEnv makes f.Getenv read $REPLAY_HOME for HOME and $REPLAY_TMPDIR for
// TMPDIR, once; NewCmdRoot calls it, so every command of a process or a test
// sees the same mapping.
func (f *Factory) mapEnv() {
	if f.envMapped || f.Getenv == nil {
		return
	}
	f.Getenv, f.envMapped = replayGetenv(f.Getenv), true
}

// replayGetenv wraps getenv so that HOME reads $REPLAY_HOME and TMPDIR reads
// $REPLAY_TMPDIR when those are set.
func replayGetenv(getenv func(string) string) func(string) string {
	return func(key string) string {
		switch key {
		case "HOME":
			if v := getenv(HomeEnv); v != "" {
				return v
			}
		case "TMPDIR":
			if v := getenv(TmpEnv); v != "" {
				return v
			}
		}
		return getenv(key)
	}
}

// Now returns the injected clock: a fixed time when --now was given, the wall clock
// otherwise. An unparsable --now is a usage error.
func (f *Factory) Now() (func() time.Time, error) {
	if f.NowFlag == "" {
		if f.wallClock == nil {
			return time.Now, nil
		}
		return f.wallClock, nil
	}
	t, err := time.Parse(time.RFC3339, f.NowFlag)
	if err != nil {
		return nil, usageError("--now %q is not an RFC 3339 time; write it like 2026-04-07T18:00:00Z", f.NowFlag)
	}
	return func() time.Time { return t }, nil
}

// Printer returns the command's one printer, built on first use from the streams
// and the global --quiet, --verbose and --json flags (parsed by then).
func (f *Factory) Printer() *ui.Printer {
	if f.printer == nil {
		f.printer = ui.New(f.IOStreams.ErrOut, ui.Options{
			Quiet: f.Quiet, Verbose: f.Verbose, JSON: f.JSON, TTY: f.IOStreams.IsStderrTTY(),
		})
	}
	return f.printer
}

// Warnf prints one warning through the printer: once per distinct text, escaped,
// nothing when --quiet was given.
func (f *Factory) Warnf(format string, args ...any) {
	f.Printer().Warnf(format, args...)
}

// interactivePrompter returns the prompter when the user can be asked (a terminal,
// no CI, no REPLAY_PROMPT_DISABLED), else nil. Aborting a confirmation (ctrl-c,
// esc) answers no.
func interactivePrompter(f *Factory) prompt.Prompter {
	if !f.IOStreams.CanPrompt() {
		return nil
	}
	return abortIsNo{f.Prompter()}
}

// askFunc is interactivePrompter's Confirm, or nil when no one can be asked.
func askFunc(f *Factory) func(title, description string) (bool, error) {
	if p := interactivePrompter(f); p != nil {
		return p.Confirm
	}
	return nil
}

// abortIsNo turns an aborted confirmation into a plain no, and an aborted choice
// into its default.
type abortIsNo struct{ prompt.Prompter }

// Select asks, answering the default option when the user aborts.
func (a abortIsNo) Select(title string, options []string, def int) (int, error) {
	i, err := a.Prompter.Select(title, options, def)
	if errors.Is(err, prompt.ErrAborted) {
		return def, nil
	}
	return i, err
}

// Confirm asks, answering no when the user aborts.
func (a abortIsNo) Confirm(title, description string) (bool, error) {
	ok, err := a.Prompter.Confirm(title, description)
	if errors.Is(err, prompt.ErrAborted) {
		return false, nil
	}
	return ok, err
}

// environ is the environment a command agent inherits: Environ's, or the
// process's when the factory sets none.
func (f *Factory) environ() []string {
	if f.Environ == nil {
		return os.Environ()
	}
	return f.Environ()
}

// baseContext is the context a command's work runs under: the MCP tool call's
// (cancelled when the client cancels the call), else the background.
func (f *Factory) baseContext() context.Context {
	if f.ctx == nil {
		return context.Background()
	}
	return f.ctx
}
