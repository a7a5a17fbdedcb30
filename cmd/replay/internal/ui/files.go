package ui

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/replaytool/replay/report"
)

// FileCountEvery is how often a terminal sees a file count while a step runs.
const FileCountEvery = 200 * time.Millisecond

// FileCounter prints the file counts of checkpoint work: on a terminal a line
// every FileCountEvery while a step runs and one when it ends; off a terminal
// only the line at the end ("checkpoint: hashing 60000 of 60000 files").
type FileCounter struct {
	w   io.Writer
	tty bool
	now func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
}

// NewFileCounter returns a counter printing on w; now is the clock of the
// throttle (the screen's own, never written to a file).
func NewFileCounter(w io.Writer, tty bool, now func() time.Time) *FileCounter {
	return &FileCounter{w: w, tty: tty, now: now, last: map[string]time.Time{}}
}

// Files takes one count: done of total files of step. It has the shape of
// checkpoint.FileProgress.
func (c *FileCounter) Files(step string, done, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := done == total
	if !end {
		if !c.tty {
			return
		}
		at, seen := c.last[step]
		if !seen {
			c.last[step] = c.now() // the first count starts the clock, quietly
			return
		}
		if c.now().Sub(at) < FileCountEvery {
			return
		}
	}
	c.last[step] = c.now()
	fmt.Fprintf(c.w, "checkpoint: %s %d of %s\n", step, done, report.Count(total, "file"))
}
