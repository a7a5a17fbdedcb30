package checkpoint

import "sync/atomic"

// FileProgress is told how far a step over the working tree's files has come:
// step is "hashing" (a snapshot) or "writing" (a restore), done of total files.
// It is called from several goroutines, once per file; it must be safe for that
// and cheap (throttle what it prints).
type FileProgress func(step string, done, total int)

// SetFileProgress makes the store report its file counts to fn (nil: none).
func (s *Store) SetFileProgress(fn FileProgress) { s.fileProgress = fn }

// fileCounter counts the files of one step and reports each to the store's
// FileProgress.
type fileCounter struct {
	fn    FileProgress
	step  string
	total int
	done  atomic.Int64
}

func (s *Store) countFiles(step string, total int) *fileCounter {
	return &fileCounter{fn: s.fileProgress, step: step, total: total}
}

// add counts n more files as done.
func (c *fileCounter) add(n int) {
	if c.fn == nil || n == 0 {
		return
	}
	c.fn(c.step, int(c.done.Add(int64(n))), c.total)
}
