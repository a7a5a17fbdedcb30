package iostreams

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// IOStreams is the set of streams a command reads from and writes to.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	getenv    func(string) string
	// termWidth is the terminal's width in columns, 0 when unknown.
	termWidth func() int
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		getenv:    os.Getenv,
		termWidth: func() int {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0
			}
			return w
		},
	}
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// SetTTY marks all three streams as terminals or not (for tests).
func (s *IOStreams) SetTTY(tty bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = tty, tty, tty
}

// SetEnv replaces the environment lookup (for tests).
func (s *IOStreams) SetEnv(getenv func(string) string) {
	s.getenv = getenv
}

// SetWidth sets the terminal width a stdout terminal reports (for tests).
func (s *IOStreams) SetWidth(columns int) {
	s.termWidth = func() int { return columns }
}

// TerminalWidth returns how wide a line on stdout may be: the terminal's columns
// when stdout is a terminal of known size, else COLUMNS when it holds a positive
// number, else 0 (no limit).
func (s *IOStreams) TerminalWidth() int {
	if s.stdoutTTY && s.termWidth != nil {
		if w := s.termWidth(); w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s.env("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 0
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether the user can be asked a question: stdin and stdout are
// terminals, and neither CI nor REPLAY_PROMPT_DISABLED is set.
func (s *IOStreams) CanPrompt() bool {
	if !s.stdinTTY || !s.stdoutTTY {
		return false
	}
	return s.env("CI") == "" && s.env("REPLAY_PROMPT_DISABLED") == ""
}

// NoPromptReason says why CanPrompt is false, for the refusal message; empty when
// the user can be asked.
func (s *IOStreams) NoPromptReason() string {
	switch {
	case !s.stdinTTY:
		return "stdin is not a terminal"
	case !s.stdoutTTY:
		return "stdout is not a terminal"
	case s.env("CI") != "":
		return "CI is set"
	case s.env("REPLAY_PROMPT_DISABLED") != "":
		return "REPLAY_PROMPT_DISABLED is set"
	}
	return ""
}

// ColorEnabled reports whether colour may be written to stdout: only on a terminal
// and never with NO_COLOR set.
func (s *IOStreams) ColorEnabled() bool {
	return s.stdoutTTY && s.env("NO_COLOR") == ""
}

// ShowProgress reports whether progress lines belong on stderr (a terminal there).
func (s *IOStreams) ShowProgress() bool { return s.stderrTTY }

func (s *IOStreams) env(key string) string {
	if s.getenv == nil {
		return ""
	}
	return s.getenv(key)
}
