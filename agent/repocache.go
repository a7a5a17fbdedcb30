package agent

import (
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/gitrepo"
)

// repoCache keeps opened worktree repositories by directory. Objects are
// immutable, so a kept repository's object cache stays right; HEAD, refs and the
// index are read from disk on every use. It is reset whenever an agent runs (an
// agent may repack, which a kept repository would not see). A nil cache opens
// every time.
type repoCache struct {
	mu    sync.Mutex
	repos map[string]*git.Repository
	held  map[string]*sync.Mutex
	// live counts, per worktree, the live dispatches running and ever started.
	live map[string]*liveCount
	// objects keeps, per worktree, the objects of the recordings re-applied
	// there, decoded: a later recording's parent trees are read from memory.
	objects map[string]map[plumbing.Hash]plumbing.EncodedObject
}

// maxKeptObjects bounds the decoded objects kept for one worktree.
const maxKeptObjects = 200000

// objectsFor returns the decoded recorded objects kept for the worktree at dir
// (nil when c is nil: nothing is kept).
func (c *repoCache) objectsFor(dir string) map[plumbing.Hash]plumbing.EncodedObject {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objects == nil {
		c.objects = map[string]map[plumbing.Hash]plumbing.EncodedObject{}
	}
	m := c.objects[dir]
	if m == nil || len(m) > maxKeptObjects {
		m = map[plumbing.Hash]plumbing.EncodedObject{}
		c.objects[dir] = m
	}
	return m
}

type liveCount struct{ running, started int }

// liveStart notes a live dispatch starting in the worktree at dir and returns its
// end, which reports whether another live dispatch ran in the same worktree at any
// time during it (their commits cannot then be told apart).
func (c *repoCache) liveStart(dir string) func() bool {
	if c == nil {
		return func() bool { return false }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil {
		c.live = map[string]*liveCount{}
	}
	n, ok := c.live[dir]
	if !ok {
		n = &liveCount{}
		c.live[dir] = n
	}
	others := n.running > 0
	startedBefore := n.started
	n.running++
	n.started++
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n.running--
		return others || n.started-startedBefore > 1
	}
}

// hold takes the worktree at dir for one re-application (two on one worktree
// would race on its HEAD, and a kept repository is not shared by two at once) and
// returns its release.
func (c *repoCache) hold(dir string) func() {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	if c.held == nil {
		c.held = map[string]*sync.Mutex{}
	}
	m, ok := c.held[dir]
	if !ok {
		m = &sync.Mutex{}
		c.held[dir] = m
	}
	c.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// open returns the repository of the worktree at dir, opened once.
func (c *repoCache) open(dir string) (*git.Repository, error) {
	if c == nil {
		return gitrepo.Open(dir)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.repos[dir]; ok {
		return r, nil
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return nil, err
	}
	if c.repos == nil {
		c.repos = map[string]*git.Repository{}
	}
	c.repos[dir] = r
	return r, nil
}

// reset forgets every kept repository.
func (c *repoCache) reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.repos, c.objects = nil, nil
}
