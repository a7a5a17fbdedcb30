package pipeline

import (
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pipeline loaded with WarmHistory hands its first CommitLog the history read in
// the background, the same commits a log read afresh has; later CommitLogs read
// afresh (a log is never kept where the project may have moved on).
func TestWarmHistoryIsTheSameHistoryOnce(t *testing.T) {
	p := build(t)
	cold := load(t, p)
	warm, err := Load(Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project, WarmHistory: true})
	require.NoError(t, err)
	started := warm.warmLog
	require.NotNil(t, started)

	want, err := cold.CommitLog().Between(time.Time{}, time.Now())
	require.NoError(t, err)
	require.NotEmpty(t, want)
	first := warm.CommitLog()
	assert.Same(t, started, first, "the first CommitLog is the warm one")
	got, err := first.Between(time.Time{}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.NotSame(t, started, warm.CommitLog(), "the second CommitLog reads afresh")
}

// A log whose branch cannot be read says so to its first question only, as it did
// before the walk could run in the background.
func TestGitLogErrorIsReturnedOnce(t *testing.T) {
	p := build(t)
	pl := load(t, p)
	log := NewGitLog(pl.Project, plumbing.NewBranchReferenceName("no-such-branch"), time.Time{})
	log.Start()
	_, err := log.Between(time.Time{}, time.Now())
	require.Error(t, err)
	got, err := log.Between(time.Time{}, time.Now())
	assert.NoError(t, err)
	assert.Empty(t, got)
}

// A walk started from an older floor and narrowed to the window answers as a log of
// that window read afresh, for every window start; takeWarmLog never keeps a walk
// that started after the window.
func TestNarrowedLogIsTheWindowsLog(t *testing.T) {
	p := build(t)
	pl := load(t, p)
	all, err := NewGitLog(pl.Project, plumbing.HEAD, time.Time{}).All()
	require.NoError(t, err)
	require.Greater(t, len(all), 3)
	for _, c := range []Commit{all[0], all[len(all)/2], all[len(all)-1]} {
		for _, since := range []time.Time{c.Time, c.Time.Add(time.Second), c.Time.Add(-time.Second)} {
			want, err := NewGitLog(pl.Project, plumbing.HEAD, since).All()
			require.NoError(t, err)
			warm := NewGitLog(pl.Project, plumbing.HEAD, time.Time{})
			warm.Start()
			warm.narrow(since)
			got, err := warm.All()
			require.NoError(t, err)
			assert.Equal(t, want, got, "since %s", since)
			// A walk started before its floor was known, bounded once it has read
			// everything or while it reads, answers the same.
			for _, wait := range []bool{true, false} {
				open := newUnboundedGitLog(pl.Project, plumbing.HEAD)
				open.Start()
				if wait {
					<-open.done
				}
				open.bound(since)
				got, err := open.All()
				require.NoError(t, err)
				assert.Equal(t, want, got, "since %s, bound after the walk: %t", since, wait)
			}
		}
	}
	late := NewGitLog(pl.Project, plumbing.HEAD, time.Now())
	pl.takeWarmLog(late)
	assert.NotSame(t, late, pl.warmLog, "a walk from after the window is not kept")
	_, since := pl.historyWindow()
	assert.True(t, pl.warmLog.floor.Equal(since))
}
