package ui

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/replaytool/replay/redispatch"
)

// DispatchBoard shows, on a terminal, one live line per running dispatch (a
// spinner, "dispatch N/M", seq, role, task and the time it has run), and prints
// each finished dispatch's line above them. It is a redispatch.ProgressReporter; the
// drawing is bubbletea's. Call Start before the first dispatch and Stop after
// the last.
type DispatchBoard struct {
	prog *tea.Program
	done chan struct{}
}

// NewDispatchBoard returns a board drawing on w (a terminal); now gives the
// elapsed times on the live lines.
func NewDispatchBoard(w io.Writer, now func() time.Time) *DispatchBoard {
	return &DispatchBoard{
		prog: tea.NewProgram(newBoardModel(now), tea.WithOutput(w), tea.WithInput(nil), tea.WithoutSignalHandler()),
		done: make(chan struct{}),
	}
}

// Start begins drawing.
func (b *DispatchBoard) Start() {
	go func() {
		defer close(b.done)
		_, _ = b.prog.Run()
	}()
}

// Stop clears the live lines, keeps the printed ones and waits for the drawing to end.
func (b *DispatchBoard) Stop() {
	b.prog.Send(stopMsg{})
	b.prog.Quit()
	<-b.done
}

// DispatchStarted adds the dispatch's live line.
func (b *DispatchBoard) DispatchStarted(d redispatch.DispatchProgress) {
	b.prog.Send(startedMsg{d})
}

// DispatchFinished prints line above the live lines and removes the dispatch's.
func (b *DispatchBoard) DispatchFinished(d redispatch.DispatchProgress, line string) {
	b.prog.Println(line) // synchronous: printed in order, before Stop's quit
	b.prog.Send(finishedMsg{d})
}

type startedMsg struct{ d redispatch.DispatchProgress }

type finishedMsg struct{ d redispatch.DispatchProgress }

type stopMsg struct{}

// boardModel is the bubbletea model: the running dispatches by N, when each
// started, and the spinner.
type boardModel struct {
	spin    spinner.Model
	now     func() time.Time
	running map[int]redispatch.DispatchProgress
	started map[int]time.Time
	done    bool
}

func newBoardModel(now func() time.Time) boardModel {
	return boardModel{
		spin: spinner.New(spinner.WithSpinner(spinner.Line)),
		now:  now, running: map[int]redispatch.DispatchProgress{}, started: map[int]time.Time{},
	}
}

// Init starts the spinner.
func (m boardModel) Init() tea.Cmd { return m.spin.Tick }

// Update follows the dispatches and the spinner.
func (m boardModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case startedMsg:
		m.running[msg.d.N] = msg.d
		m.started[msg.d.N] = m.now()
	case finishedMsg:
		delete(m.running, msg.d.N)
		delete(m.started, msg.d.N)
	case stopMsg:
		m.done = true
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	return m, nil
}

// View is one line per running dispatch, in N order; nothing once done.
func (m boardModel) View() string {
	if m.done || len(m.running) == 0 {
		return ""
	}
	ns := make([]int, 0, len(m.running))
	for n := range m.running {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	lines := make([]string, 0, len(ns))
	for _, n := range ns {
		d := m.running[n]
		elapsed := m.now().Sub(m.started[n]).Truncate(time.Second)
		lines = append(lines, fmt.Sprintf("%s dispatch %d/%d: %s — running %s", m.spin.View(), d.N, d.Of, d.Label(), elapsed))
	}
	return strings.Join(lines, "\n")
}
