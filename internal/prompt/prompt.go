package prompt

import (
	"errors"
	"fmt"
	"io"

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

// Huh is a Prompter that draws huh forms on the terminal.
type Huh struct {
	In  io.Reader
	Out io.Writer
}

// Confirm shows a huh confirmation form.
func (h *Huh) Confirm(title, description string) (bool, error) {
	answer := false
	c := huh.NewConfirm().Title(title).Description(description).Affirmative("Yes").Negative("No").Value(&answer)
	if err := h.run(huh.NewForm(huh.NewGroup(c))); err != nil {
		return false, err
	}
	return answer, nil
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
	if h.In != nil {
		f = f.WithInput(h.In)
	}
	if h.Out != nil {
		f = f.WithOutput(h.Out)
	}
	if err := f.Run(); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return ErrAborted
		}
		return fmt.Errorf("prompt: %w", err)
	}
	return nil
}

// ErrAborted is returned when the user aborts a prompt (ctrl-c or esc).
var ErrAborted = errors.New("prompt aborted by the user")

// Scripted is a Prompter that answers from a script, for tests. It records every
// question it was asked.
type Scripted struct {
	Confirms []bool
	Selects  []int
	Asked    []string
	// Defaults records the default option of every choice asked.
	Defaults []int
}

// Confirm returns the next scripted yes/no answer, or an error when none is left.
func (s *Scripted) Confirm(title, description string) (bool, error) {
	s.Asked = append(s.Asked, title)
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
