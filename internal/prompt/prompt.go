package prompt

import (
	"errors"
	"fmt"
	"io"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
)

// Prompter asks the user a yes/no question or a choice among options.
type Prompter interface {
	// Confirm asks a yes/no question; the default answer is no.
	Confirm(title, description string) (bool, error)
	// Select asks for one of options and returns its index; the cursor starts on
	// option def, the answer when the user just presses enter.
	Select(title string, options []string, def int) (int, error)
}

// Huh is a Prompter that draws huh forms on the terminal. The answer under the
// cursor is marked with "> " as well as by colour, so the selection reads the same
// with NO_COLOR; Esc aborts (ErrAborted) and Ctrl-C interrupts (ErrInterrupted).
type Huh struct {
	In  io.Reader
	Out io.Writer
	// Plain draws without colour (NO_COLOR).
	Plain bool
}

// The answers of a confirmation, drawn as a choice so the cursor shows which one
// Enter takes; no is first and the default.
const (
	answerNo  = "No (change nothing)"
	answerYes = "Yes"
)

// Confirm asks a yes/no question as a two-option choice with the cursor on no.
func (h *Huh) Confirm(title, description string) (bool, error) {
	choice := 0
	s := huh.NewSelect[int]().Title(title).Description(description).
		Options(huh.NewOption(answerNo, 0), huh.NewOption(answerYes, 1)).Value(&choice)
	if err := h.run(huh.NewForm(huh.NewGroup(s))); err != nil {
		return false, err
	}
	return choice == 1, nil
}

// Select shows a huh selection form with the cursor on option def.
func (h *Huh) Select(title string, options []string, def int) (int, error) {
	choice := def
	opts := make([]huh.Option[int], len(options))
	for i, o := range options {
		opts[i] = huh.NewOption(o, i)
	}
	s := huh.NewSelect[int]().Title(title).Options(opts...).Value(&choice)
	if err := h.run(huh.NewForm(huh.NewGroup(s))); err != nil {
		return 0, err
	}
	return choice, nil
}

func (h *Huh) run(f *huh.Form) error {
	theme := huh.ThemeCharm()
	if h.Plain {
		theme = huh.ThemeBase()
	}
	keys := huh.NewDefaultKeyMap()
	keys.Quit = key.NewBinding(key.WithKeys("ctrl+c", "esc"))
	var esc bool
	f = f.WithTheme(theme).WithKeyMap(keys).WithProgramOptions(tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		if k, ok := msg.(tea.KeyMsg); ok {
			esc = k.Type == tea.KeyEsc
		}
		return msg
	}))
	// After WithProgramOptions, which replaces the program options these add to.
	if h.In != nil {
		f = f.WithInput(h.In)
	}
	if h.Out != nil {
		f = f.WithOutput(h.Out)
	}
	if err := f.Run(); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			if esc {
				return ErrAborted
			}
			return ErrInterrupted
		}
		return fmt.Errorf("prompt: %w", err)
	}
	return nil
}

// ErrAborted is returned when the user aborts a prompt with Esc: the safe answer.
var ErrAborted = errors.New("prompt aborted by the user")

// ErrInterrupted is returned when the user interrupts a prompt with Ctrl-C (or the
// process gets SIGINT).
var ErrInterrupted = errors.New("prompt interrupted by the user (Ctrl-C)")

// Scripted is a Prompter that answers from a script, for tests. It records every
// question it was asked.
type Scripted struct {
	Confirms []bool
	Selects  []int
	Asked    []string
	// Defaults records the default option of every choice asked.
	Defaults []int
	// Err, when set, is what every question returns (after being recorded), as a
	// user pressing Esc (ErrAborted) or Ctrl-C (ErrInterrupted) would.
	Err error
}

// Confirm returns the next scripted yes/no answer, or an error when none is left.
func (s *Scripted) Confirm(title, description string) (bool, error) {
	s.Asked = append(s.Asked, title)
	if s.Err != nil {
		return false, s.Err
	}
	if len(s.Confirms) == 0 {
		return false, fmt.Errorf("scripted prompter: unexpected confirmation %q", title)
	}
	a := s.Confirms[0]
	s.Confirms = s.Confirms[1:]
	return a, nil
}

// Select returns the next scripted choice, or an error when none is left.
func (s *Scripted) Select(title string, options []string, def int) (int, error) {
	s.Asked = append(s.Asked, title)
	s.Defaults = append(s.Defaults, def)
	if s.Err != nil {
		return 0, s.Err
	}
	if len(s.Selects) == 0 {
		return 0, fmt.Errorf("scripted prompter: unexpected choice %q", title)
	}
	a := s.Selects[0]
	s.Selects = s.Selects[1:]
	if a < 0 || a >= len(options) {
		return 0, fmt.Errorf("scripted prompter: choice %d out of range for %q", a, title)
	}
	return a, nil
}
