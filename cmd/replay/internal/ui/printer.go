package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/replaytool/replay/report"
)

// Options say how a Printer behaves; they mirror the global output flags.
type Options struct {
	// Quiet drops warnings, progress and status lines (errors still print).
	Quiet bool
	// Verbose adds detail lines on stderr.
	Verbose bool
	// JSON means stdout carries one JSON document: progress is silent, warnings
	// still go to stderr as text lines.
	JSON bool
	// TTY says stderr is a terminal: progress may redraw a live line there.
	TTY bool
}

// Printer writes everything besides a command's result: warnings (each distinct
// warning once, in first-seen order), status lines, verbose detail and progress.
// It is safe for concurrent use.
type Printer struct {
	errOut io.Writer
	opts   Options

	mu       sync.Mutex
	seen     map[string]bool
	warnings []string
}

// New returns a Printer writing to errOut under opts.
func New(errOut io.Writer, opts Options) *Printer {
	if errOut == nil {
		errOut = io.Discard
	}
	return &Printer{errOut: errOut, opts: opts, seen: map[string]bool{}}
}

// Options returns the options the printer was built with.
func (p *Printer) Options() Options { return p.opts }

// Warnf prints "warning: TEXT" on stderr the first time a warning with this text
// is given, unless quiet. The text is escaped: warnings carry values from a run's
// files. Every distinct warning is kept for Warnings, even when quiet.
func (p *Printer) Warnf(format string, args ...any) {
	msg := report.SafeText(strings.TrimSpace(fmt.Sprintf(format, args...)))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[msg] {
		return
	}
	p.seen[msg] = true
	p.warnings = append(p.warnings, msg)
	if !p.opts.Quiet {
		fmt.Fprintf(p.errOut, "warning: %s\n", msg)
	}
}

// Warnings returns every distinct warning given so far, in order.
func (p *Printer) Warnings() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.warnings...)
}

// Infof prints one status line on stderr (what is happening, where a file went),
// unless quiet. The text is escaped.
func (p *Printer) Infof(format string, args ...any) {
	if p.opts.Quiet {
		return
	}
	p.line(fmt.Sprintf(format, args...))
}

// Verbosef prints one detail line on stderr, only with --verbose.
func (p *Printer) Verbosef(format string, args ...any) {
	if !p.opts.Verbose || p.opts.Quiet {
		return
	}
	p.line(fmt.Sprintf(format, args...))
}

// Log returns the writer for a domain package's log lines (restore steps, the
// undo command): stderr, or io.Discard when quiet. Lines starting with
// "warning: " written there go through Warnf, so they are printed once too.
func (p *Printer) Log() io.Writer {
	if p.opts.Quiet {
		return io.Discard
	}
	return &logWriter{p: p}
}

// ProgressWriter returns the writer for progress lines, io.Discard when quiet or
// under --json.
func (p *Printer) ProgressWriter() io.Writer {
	if p.opts.Quiet || p.opts.JSON {
		return io.Discard
	}
	return &logWriter{p: p}
}

// ShowProgress reports whether progress is printed at all.
func (p *Printer) ShowProgress() bool { return !p.opts.Quiet && !p.opts.JSON }

func (p *Printer) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.errOut, report.SafeText(strings.TrimRight(s, "\n")))
}

// logWriter splits what it is given into lines; warnings go through Warnf, other
// lines straight to stderr. A line is written when its newline arrives.
type logWriter struct {
	p       *Printer
	mu      sync.Mutex
	pending []byte
}

// Write buffers b and prints every complete line.
func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, b...)
	for {
		i := strings.IndexByte(string(w.pending), '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.pending[:i])
		w.pending = w.pending[i+1:]
		if msg, ok := strings.CutPrefix(line, "warning: "); ok {
			w.p.Warnf("%s", msg)
			continue
		}
		w.p.mu.Lock()
		_, err := fmt.Fprintln(w.p.errOut, report.SafeText(line))
		w.p.mu.Unlock()
		if err != nil {
			return len(b), err
		}
	}
}
