//go:build unix

package cli_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Completing --session never blocks on a replay-diff.jsonl a run planted as a
// FIFO (os.ReadFile waited for a writer forever, on every tab press): the log
// is read through runfile, refused at once, and nothing is completed.
func TestSessionCompletionNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "replay-diff.jsonl"), 0o644))
	}
	done := make(chan Result, 1)
	go func() { done <- s.Run(t, p.Project, "__complete", "diff", "--session", "") }()
	select {
	case r := <-done:
		assert.Equal(t, 0, r.Code, r.Stderr)
		assert.NotContains(t, r.Stdout, "replay of")
	case <-time.After(60 * time.Second):
		t.Fatal("completing --session blocked on a FIFO replay-diff.jsonl")
	}
}
