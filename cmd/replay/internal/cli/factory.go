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

// Factory holds the dependencies a command takes from the outside world, so tests
// can replace each piece: streams, prompter, clock, environment and working
// directory. It holds no parsed flag: the global flags are parsed into each
// command's globalOptions, and a command's options take from the Factory only
// the dependencies they use (see cmdBase).
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Prompter returns the interactive prompter; only called when IOStreams.CanPrompt().
	Prompter func() prompt.Prompter
	Getenv   func(string) string
	Getwd    func() (string, error)
	// Environ returns the environment a command agent inherits (KEY=VALUE pairs);
	// nil means the process's own.
	Environ func() []string

	// Clock is the wall clock; nil means time.Now. A --now flag replaces it.
	Clock func() time.Time

	// printer, when set, is the printer every command built from this factory
	// shares (the demo's steps: a warning they share prints once).
	printer *ui.Printer
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
		Clock:     time.Now,
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

// interactivePrompter returns the prompter when the user can be asked (a terminal,
// no CI, no REPLAY_PROMPT_DISABLED), else nil. Aborting a confirmation (ctrl-c,
// esc) answers no.
func interactivePrompter(f *runEnv) prompt.Prompter {
	if !f.IO.CanPrompt() || f.Prompter == nil {
		return nil
	}
	return abortIsNo{f.Prompter()}
}

// askFunc is interactivePrompter's Confirm, or nil when no one can be asked.
func askFunc(f *runEnv) func(title, description string) (bool, error) {
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
