package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// State files last written before the run started are another run's: the CSB
// ignores them with a warning naming each, and takes its state from the others.
func TestStateFilesOlderThanTheRunAreIgnored(t *testing.T) {
	t.Parallel()
	p := build(t)
	pl, a := decideFixture(t, p)
	old := pl.RunStart().Add(-7 * 24 * time.Hour)
	handoffs, err := filepath.Glob(filepath.Join(pl.ScratchDir, "handoff-*.md"))
	require.NoError(t, err)
	stale := append(handoffs, filepath.Join(pl.ScratchDir, "pipeline-status.md"), p.BuildModeFile)
	for _, f := range stale {
		require.NoError(t, os.Chtimes(f, old, old))
	}
	st := Reconstruct(a, p.Tmp, [20]byte{})
	all := strings.Join(st.Warnings, "\n")
	assert.Contains(t, all, "build-mode file "+p.BuildModeFile)
	assert.Contains(t, all, "pipeline-status.md")
	assert.Contains(t, all, "before this run started: another run's, ignored")
	assert.Empty(t, st.CSB.Goal, "the goal of the stale handoff and status is not taken")

	// The same files written during the run are read.
	now := pl.RunStart().Add(time.Hour)
	for _, f := range stale {
		require.NoError(t, os.Chtimes(f, now, now))
	}
	st = Reconstruct(a, p.Tmp, [20]byte{})
	assert.NotContains(t, strings.Join(st.Warnings, "\n"), "another run's, ignored")
	assert.NotEmpty(t, st.CSB.Goal)
}

// A checkpoint taken before the run started is another run's: never restored by
// the decision; with none of its own, a warning names it and how to restore it.
func TestForeignCheckpointIsNeverRestoredByTheDecision(t *testing.T) {
	t.Parallel()
	p := build(t)
	pl := load(t, p)
	require.NotEmpty(t, pl.Checkpoints)
	start := pl.RunStart()
	for _, cp := range pl.Checkpoints {
		assert.False(t, cp.Time.Before(start), "the fixture's own checkpoints are all the run's")
	}
	// Age every checkpoint a week: they become another run's.
	own := pl.Checkpoints
	pl.ForeignCheckpoints = nil
	for _, cp := range own {
		cp.Time = cp.Time.Add(-7 * 24 * time.Hour)
		pl.ForeignCheckpoints = append(pl.ForeignCheckpoints, cp)
	}
	pl.Checkpoints = nil
	a, err := Decide(pl, "", 0, p.Now)
	require.NoError(t, err)
	assert.Nil(t, a.Checkpoint, "another run's checkpoint is never the resume checkpoint")
	assert.True(t, a.NoCheckpoint)
	all := strings.Join(a.Warnings, "\n")
	assert.Contains(t, all, "of another run (taken before this run started)")
	assert.Contains(t, all, "replay checkpoint restore ")

	// With its own checkpoints back, nothing names the other run's.
	pl.Checkpoints = own
	a, err = Decide(pl, "", 0, p.Now)
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	assert.NotContains(t, strings.Join(a.Warnings, "\n"), "of another run")
}

// The plan's preflight says what the restore will have to ask: with no terminal,
// no verified boundary stops the run (whatever the flags), and no checkpoint stops
// it unless --yes; with a terminal, or for an A/B replay, neither is a failure.
func TestPreflightSaysWhatTheRestoreWillAsk(t *testing.T) {
	t.Parallel()
	_, a := decideFixture(t, reference(t))
	require.NotEmpty(t, WorkItems(a))
	ok := RunPreflight(a, PreflightOptions{Confirm: true})
	require.NoError(t, ok.Err, "a verified boundary with its checkpoint asks only the restore's confirmation")

	b := *a
	b.NoVerifiedBoundary = true
	got := RunPreflight(&b, PreflightOptions{Confirm: true, Yes: true})
	require.ErrorIs(t, got.Err, ErrNotConfirmed)
	assert.Contains(t, strings.Join(got.Lines, "\n"), "FAIL: no verified boundary")
	require.NoError(t, RunPreflight(&b, PreflightOptions{Confirm: true, CanPrompt: true}).Err)
	require.NoError(t, RunPreflight(&b, PreflightOptions{}).Err, "an A/B replay restores nothing")

	c := *a
	c.Checkpoint, c.NoCheckpoint = nil, true
	warned := RunPreflight(&c, PreflightOptions{Confirm: true})
	require.NoError(t, warned.Err, "--yes answers it: a warning")
	assert.Contains(t, strings.Join(warned.Lines, "\n"), "warning: no checkpoint to restore")
	assert.NotContains(t, strings.Join(RunPreflight(&c, PreflightOptions{Confirm: true, Yes: true}).Lines, "\n"), "no checkpoint to restore")
}
