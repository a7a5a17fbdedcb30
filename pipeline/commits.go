package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/gitrepo"
)

// GitLog is a CommitLog over a project repository: it walks the history from HEAD
// once, newest first by committer time, and stops at the oldest time it was asked
// about, so its cost follows the pipeline's window, not the history's length.
type GitLog struct {
	repo    *git.Repository
	ref     plumbing.ReferenceName
	since   time.Time
	commits []Commit // newest first
	loaded  bool
}

// NewGitLog returns a log of the history of ref (a branch, or HEAD) from since on.
func NewGitLog(repo *git.Repository, ref plumbing.ReferenceName, since time.Time) *GitLog {
	return &GitLog{repo: repo, ref: ref, since: since}
}

func (g *GitLog) load() error {
	if g.loaded {
		return nil
	}
	g.loaded = true
	head, err := g.repo.Reference(g.ref, true)
	if err != nil {
		return fmt.Errorf("project %s: %w", g.ref, err)
	}
	objects, done := gitrepo.WalkStorage(g.repo)
	defer done()
	tip, err := object.GetCommit(objects, head.Hash())
	if err != nil {
		return fmt.Errorf("project history: %w", err)
	}
	it := object.NewCommitIterCTime(tip, nil, nil)
	defer it.Close()
	err = it.ForEach(func(c *object.Commit) error {
		if c.Committer.When.Before(g.since) {
			return storer.ErrStop
		}
		g.commits = append(g.commits, Commit{Hash: c.Hash.String(), Time: c.Committer.When, Message: c.Message})
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return fmt.Errorf("project history: %w", err)
	}
	sort.SliceStable(g.commits, func(i, j int) bool { return g.commits[i].Time.After(g.commits[j].Time) })
	return nil
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
