package pipeline

import (
	"fmt"
	"sort"
	"sync"
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

	start    sync.Once
	done     chan struct{}
	commits  []Commit // newest first
	err      error
	mu       sync.Mutex
	answered bool
}

// NewGitLog returns a log of the history of ref (a branch, or HEAD) from since on.
func NewGitLog(repo *git.Repository, ref plumbing.ReferenceName, since time.Time) *GitLog {
	return &GitLog{repo: repo, ref: ref, since: since, done: make(chan struct{})}
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

// load waits for the walk. Its error is returned once, to the first question; the
// log then answers with the commits it has (none), as before the walk could run in
// the background.
func (g *GitLog) load() error {
	g.Start()
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.answered {
		return nil
	}
	g.answered = true
	return g.err
}

// walk reads the commits from tip back to since, newest first.
func (g *GitLog) walk(tip plumbing.Hash) ([]Commit, error) {
	var commits []Commit
	err := gitrepo.WalkByCommitTime(g.repo, tip, func(c *gitrepo.CommitInfo) error {
		if c.When.Before(g.since) {
			return storer.ErrStop
		}
		commits = append(commits, Commit{Hash: c.Hash.String(), Time: c.When, Message: c.Message})
		return nil
	})
	if err != nil {
		// The commits read before the error stay (unsorted): later questions see them.
		return commits, fmt.Errorf("project history: %w", err)
	}
	sort.SliceStable(commits, func(i, j int) bool { return commits[i].Time.After(commits[j].Time) })
	return commits, nil
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
