package ui

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/report"
)

// ReplicaBoard shows, on a terminal, one live line per running replica of a
// replicated A/B replay or corpus (a spinner, the arm, "replica N/M", its session,
// the dispatch it runs and how long it has run), and prints each finished
// replica's line, with its outcome, above them. It is a replicate.Progress; the
// drawing is bubbletea's. Call Start before the first replica and Stop after the last.
type ReplicaBoard struct {
	prog *tea.Program
	done chan struct{}
	now  func() time.Time
	mu   sync.Mutex
	from map[string]time.Time
}

// NewReplicaBoard returns a board drawing on w (a terminal); now gives the elapsed times.
func NewReplicaBoard(w io.Writer, now func() time.Time) *ReplicaBoard {
	return &ReplicaBoard{
		prog: tea.NewProgram(newReplicaModel(now), tea.WithOutput(w), tea.WithInput(nil), tea.WithoutSignalHandler()),
		done: make(chan struct{}), now: now, from: map[string]time.Time{},
	}
}

// Start begins drawing.
func (b *ReplicaBoard) Start() {
	go func() {
		defer close(b.done)
		_, _ = b.prog.Run()
	}()
}

// Stop clears the live lines, keeps the printed ones and waits for the drawing to end.
func (b *ReplicaBoard) Stop() {
	b.prog.Send(stopMsg{})
	b.prog.Quit()
	<-b.done
}

// ReplicaStarted adds the replica's live line.
func (b *ReplicaBoard) ReplicaStarted(r replicate.ReplicaRun) {
	b.mu.Lock()
	b.from[replicaKey(r)] = b.now()
	b.mu.Unlock()
	b.prog.Send(replicaStartedMsg{r})
}

// ReplicaDispatch shows the dispatch the replica runs now.
func (b *ReplicaBoard) ReplicaDispatch(r replicate.ReplicaRun, d redispatch.DispatchProgress) {
	b.prog.Send(replicaDispatchMsg{r, d})
}

// ReplicaFinished prints the replica's line with its outcome above the live lines
// and removes its live line.
func (b *ReplicaBoard) ReplicaFinished(r replicate.ReplicaRun, outcome string) {
	b.mu.Lock()
	took := b.now().Sub(b.from[replicaKey(r)])
	b.mu.Unlock()
	b.prog.Println(finishedReplicaLine(r, outcome, took)) // synchronous: in order, before Stop's quit
	b.prog.Send(replicaFinishedMsg{r})
}

// finishedReplicaLine is "baseline replica 2/4 (session S) done in 17s: 9 dispatches".
func finishedReplicaLine(r replicate.ReplicaRun, outcome string, took time.Duration) string {
	return report.Safe(fmt.Sprintf("%s done in %s: %s", r.Label(), took.Round(time.Second), outcome))
}

func replicaKey(r replicate.ReplicaRun) string { return fmt.Sprintf("%s %d", r.Arm, r.Index) }

// ReplicaLines reports replicas off a terminal: one line per replica when it has
// finished, with its outcome; nothing while it runs.
type ReplicaLines struct {
	W   io.Writer
	Now func() time.Time

	mu   sync.Mutex
	from map[string]time.Time
}

// ReplicaStarted notes when the replica started.
func (l *ReplicaLines) ReplicaStarted(r replicate.ReplicaRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.from == nil {
		l.from = map[string]time.Time{}
	}
	l.from[replicaKey(r)] = l.Now()
}

// ReplicaDispatch prints nothing.
func (l *ReplicaLines) ReplicaDispatch(replicate.ReplicaRun, redispatch.DispatchProgress) {}

// ReplicaFinished writes the replica's line.
func (l *ReplicaLines) ReplicaFinished(r replicate.ReplicaRun, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.W, finishedReplicaLine(r, outcome, l.Now().Sub(l.from[replicaKey(r)])))
}

type replicaStartedMsg struct{ r replicate.ReplicaRun }

type replicaDispatchMsg struct {
	r replicate.ReplicaRun
	d redispatch.DispatchProgress
}

type replicaFinishedMsg struct{ r replicate.ReplicaRun }

// replicaModel is the bubbletea model: the running replicas, when each started,
// the dispatch each runs, and the spinner.
type replicaModel struct {
	spin     spinner.Model
	now      func() time.Time
	running  map[string]replicate.ReplicaRun
	started  map[string]time.Time
	dispatch map[string]string
	done     bool
}

func newReplicaModel(now func() time.Time) replicaModel {
	return replicaModel{
		spin: spinner.New(spinner.WithSpinner(spinner.Line)), now: now,
		running: map[string]replicate.ReplicaRun{}, started: map[string]time.Time{}, dispatch: map[string]string{},
	}
}

// Init starts the spinner.
func (m replicaModel) Init() tea.Cmd { return m.spin.Tick }

// Update follows the replicas and the spinner.
func (m replicaModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case replicaStartedMsg:
		k := replicaKey(msg.r)
		m.running[k], m.started[k] = msg.r, m.now()
	case replicaDispatchMsg:
		m.dispatch[replicaKey(msg.r)] = msg.d.Label()
	case replicaFinishedMsg:
		k := replicaKey(msg.r)
		delete(m.running, k)
		delete(m.started, k)
		delete(m.dispatch, k)
	case stopMsg:
		m.done = true
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	return m, nil
}

// View is one line per running replica, baseline before mutated, by index.
func (m replicaModel) View() string {
	if m.done || len(m.running) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m.running))
	for k := range m.running {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := m.running[keys[i]], m.running[keys[j]]
		if a.Arm != b.Arm {
			return a.Arm < b.Arm
		}
		return a.Index < b.Index
	})
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		r := m.running[k]
		what := m.dispatch[k]
		if what == "" {
			what = "starting"
		}
		elapsed := m.now().Sub(m.started[k]).Truncate(time.Second)
		lines = append(lines, report.Safe(fmt.Sprintf("%s %s — %s — %s", m.spin.View(), r.Label(), what, elapsed)))
	}
	return strings.Join(lines, "\n")
}
