package pipeline

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/gitrepo"
)

// GitLog is a CommitLog over a project repository: it walks the history from HEAD
// once, newest first by committer time, and stops at the oldest time it was asked
// about, so its cost follows the pipeline's window, not the history's length. Start
// begins the walk in the background, so that it overlaps other work; the first
// question waits for it.
type GitLog struct {
	repo  *git.Repository
	ref   plumbing.ReferenceName
	since time.Time
	// floor is where the walk stops (the first commit before it); since is not
	// later. A log started before its window was known walks from a lower floor
	// and is narrowed to since when the walk is done (finish).
	floor time.Time
	// walkFloor is floor as the walk reads it; nil while a log started before
	// its floor was known (newUnboundedGitLog) waits for bound: the walk reads on;
	// the end of time once stopped.
	walkFloor atomic.Pointer[time.Time]

	start    sync.Once
	done     chan struct{}
	commits  []Commit // newest first, once finished
	err      error
	mu       sync.Mutex
	finished bool // the first question came: commits are final, err was returned
}

// NewGitLog returns a log of the history of ref (a branch, or HEAD) from since on.
func NewGitLog(repo *git.Repository, ref plumbing.ReferenceName, since time.Time) *GitLog {
	g := newUnboundedGitLog(repo, ref)
	g.bound(since)
	return g
}

// newUnboundedGitLog returns a log whose walk can start before its floor is known:
// until bound, it reads on; what it reads past the floor is dropped (finish).
func newUnboundedGitLog(repo *git.Repository, ref plumbing.ReferenceName) *GitLog {
	return &GitLog{repo: repo, ref: ref, done: make(chan struct{})}
}

// bound sets the floor, and the window's start, of a log from newUnboundedGitLog,
// before any question and once; its walk stops at the floor from then on.
func (g *GitLog) bound(floor time.Time) {
	g.since, g.floor = floor, floor
	g.walkFloor.Store(&floor)
}

// Start begins reading the history in the background, once. The walk reads the
// repository through storage of its own (gitrepo.WalkStorage); its reference is
// resolved before Start returns.
func (g *GitLog) Start() {
	g.start.Do(func() {
		head, err := g.repo.Reference(g.ref, true)
		if err != nil {
			g.err = fmt.Errorf("project %s: %w", g.ref, err)
			close(g.done)
			return
		}
		go func() {
			defer close(g.done)
			g.commits, g.err = g.walk(head.Hash())
		}()
	})
}

// narrow sets the window's start of a log whose walk started from floor, before
// any question: since must not be before floor.
func (g *GitLog) narrow(since time.Time) { g.since = since }

// load waits for the walk. Its error is returned once, to the first question; the
// log then answers with the commits it has (none), as before the walk could run in
// the background.
func (g *GitLog) load() error {
	g.Start()
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finished {
		return nil
	}
	g.finished = true
	g.finish()
	return g.err
}

// stop ends the walk at its next commit: nothing of the history is needed.
func (g *GitLog) stop() {
	end := time.Unix(1<<62, 0)
	g.walkFloor.Store(&end)
}

// walk reads the commits from tip back to floor, in the walk's order.
func (g *GitLog) walk(tip plumbing.Hash) ([]Commit, error) {
	var commits []Commit
	err := gitrepo.WalkByCommitTime(g.repo, tip, func(c *gitrepo.CommitInfo) error {
		if floor := g.walkFloor.Load(); floor != nil && c.When.Before(*floor) {
			return storer.ErrStop
		}
		commits = append(commits, Commit{Hash: c.Hash.String(), Time: c.When, Message: c.Message})
		return nil
	})
	if err != nil {
		return commits, fmt.Errorf("project history: %w", err)
	}
	return commits, nil
}

// finish makes of the walk's commits what a walk stopping at since would have
// read: they end before the first commit older than since, in the walk's order
// (a walk from since stops there, before any later error); then they are sorted
// newest first. After an error that came first, the commits read stay unsorted,
// for later questions.
func (g *GitLog) finish() {
	for i, c := range g.commits {
		if c.Time.Before(g.since) {
			g.commits, g.err = g.commits[:i], nil
			if i == 0 {
				g.commits = nil // as the walk from since: nothing appended
			}
			break
		}
	}
	if g.err == nil {
		sort.SliceStable(g.commits, func(i, j int) bool { return g.commits[i].Time.After(g.commits[j].Time) })
	}
}

// Between returns the commits with committer time in [start, end], newest first.
func (g *GitLog) Between(start, end time.Time) ([]Commit, error) {
	if err := g.load(); err != nil {
		return nil, err
	}
	// The commits are sorted newest first: skip those after end, take until before start.
	i := sort.Search(len(g.commits), func(i int) bool { return !g.commits[i].Time.After(end) })
	j := i
	for j < len(g.commits) && !g.commits[j].Time.Before(start) {
		j++
	}
	if i == j {
		return nil, nil
	}
	return append([]Commit(nil), g.commits[i:j]...), nil
}

// All returns every commit loaded (from since on), newest first.
func (g *GitLog) All() ([]Commit, error) {
	if err := g.load(); err != nil {
		return nil, err
	}
	return g.commits, nil
}
