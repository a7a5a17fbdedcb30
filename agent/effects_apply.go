package agent

import (
	"fmt"
	"os"
	"sort"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
)

// maxEffectCommits bounds the chain of commits one dispatch may have created.
const maxEffectCommits = 10000

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// applyEffectsWith re-applies a recording's side effects for req: its commits onto
// the worktree (see applyCommits), then its dispatch-dir files and receipts.
// Everything is checked before anything is written. HEAD already at the recorded
// HEAD after means the commits are applied. The worktree's repository is opened from
// repos, which also keeps the objects re-applied (nil: opened afresh, nothing kept).
func applyEffectsWith(repos *repoCache, req Request, eff *Effects) error {
	if eff == nil {
		return nil
	}
	names, files, receipts, err := checkEffectFiles(req, eff)
	if err != nil {
		return err
	}
	if eff.HeadAfter != "" {
		if err := applyCommits(repos, req.WorkDir, eff); err != nil {
			return fmt.Errorf("dispatch %s: re-applying the recorded commits: %w", req.ID(), err)
		}
	}
	for i, f := range names {
		if err := safewrite.WriteAtomicIn(req.DispatchDir, f.Name, files[i]); err != nil {
			return fmt.Errorf("dispatch %s: restoring %s: %w", req.ID(), f.Name, err)
		}
	}
	return applyReceipts(req, receipts)
}

// applyReceipts appends the recorded receipt lines the ledger does not hold yet.
func applyReceipts(req Request, receipts []string) error {
	if len(receipts) == 0 {
		return nil
	}
	lines, err := ledgerLines(req)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, l := range lines {
		have[l] = true
	}
	ledger, err := safewrite.OpenInRoot(req.DispatchDir, manifest.ReceiptLedgerFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", req.ID(), err)
	}
	defer ledger.Close()
	for _, l := range receipts {
		if have[l] {
			continue
		}
		if _, err := ledger.WriteString(l + "\n"); err != nil {
			return fmt.Errorf("dispatch %s: appending its receipt to %s: %w", req.ID(), ledger.Name(), err)
		}
		have[l] = true
	}
	return ledger.Close()
}

// applyCommits puts the recorded commits onto the worktree at dir: each one's
// changes are written and committed on HEAD with its message, author and committer.
// On the recorded HEAD before this recreates the recorded commits exactly (a
// fast-forward to them); elsewhere they are new commits with the same changes. The
// old HEAD stays an ancestor, nothing is lost. HEAD already at the recorded HEAD
// after means they were applied.
func applyCommits(repos *repoCache, dir string, eff *Effects) error {
	repo, err := repos.open(dir)
	if err != nil {
		return fmt.Errorf("%s: not a git worktree: %w", dir, err)
	}
	head, err := repo.Head()
	if err != nil {
		return fmt.Errorf("%s: cannot read HEAD: %w", dir, err)
	}
	if head.Hash().String() == eff.HeadAfter {
		return nil
	}
	mem := repos.objectsFor(dir)
	if mem == nil {
		mem = map[plumbing.Hash]plumbing.EncodedObject{}
	}
	mem, err = storeObjectsInto(repo, eff.Objects, mem)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	chain, err := recordedChain(recordedObjects{EncodedObjectStorer: repo.Storer, mem: mem}, eff)
	if err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	changes := make([]object.Changes, len(chain))
	for i, c := range chain {
		if changes[i], err = commitChanges(c); err != nil {
			return err
		}
	}
	if head.Hash().String() == eff.HeadBefore && len(chain) > 0 {
		if err := fastForward(repo, wt, head, chain, changes); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		return nil
	}
	if err := checkTouchedPaths(wt, chain, changes); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return replayChanges(wt, chain, changes)
}

// checkTouchedPaths refuses to re-apply commits over staged changes or over
// uncommitted changes in a path the commits touch.
func checkTouchedPaths(wt *git.Worktree, chain []*object.Commit, changes []object.Changes) error {
	st, err := wt.Status()
	if err != nil {
		return fmt.Errorf("cannot read the worktree status: %w", err)
	}
	for path, fs := range st {
		if fs.Staging != git.Unmodified && fs.Staging != git.Untracked {
			return fmt.Errorf("%s has staged changes; commit or unstage them, then replay again", path)
		}
	}
	for i, c := range chain {
		for _, ch := range changes[i] {
			for _, name := range []string{ch.From.Name, ch.To.Name} {
				if fs, ok := st[name]; ok && name != "" && fs.Worktree != git.Unmodified {
					return fmt.Errorf("%s has uncommitted changes and the recorded commit %s changes it; commit or stash them, then replay again", name, c.Hash.String()[:8])
				}
			}
		}
	}
	return nil
}

// commitChanges returns what commit c changed against its first parent.
func commitChanges(c *object.Commit) (object.Changes, error) {
	from := &object.Tree{}
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return nil, fmt.Errorf("recorded commit %s: %w", c.Hash, err)
		}
		if from, err = p.Tree(); err != nil {
			return nil, fmt.Errorf("recorded commit %s: %w", p.Hash, err)
		}
	}
	to, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("recorded commit %s: %w", c.Hash, err)
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return nil, fmt.Errorf("recorded commit %s: %w", c.Hash, err)
	}
	return changes, nil
}

// replayChanges writes and commits each chain commit's changes on HEAD.
func replayChanges(wt *git.Worktree, chain []*object.Commit, changes []object.Changes) error {
	root := wt.Filesystem.Root()
	for i, c := range chain {
		to, err := c.Tree()
		if err != nil {
			return fmt.Errorf("recorded commit %s: %w", c.Hash, err)
		}
		for _, ch := range changes[i] {
			if err := applyChange(wt, root, to, ch); err != nil {
				return fmt.Errorf("recorded commit %s: %w", c.Hash, err)
			}
		}
		author, committer := c.Author, c.Committer
		if _, err := wt.Commit(c.Message, &git.CommitOptions{Author: &author, Committer: &committer, AllowEmptyCommits: true}); err != nil {
			return fmt.Errorf("%s: re-committing %s: %w", root, c.Hash, err)
		}
	}
	return nil
}

// applyChange writes (or removes) the paths of one change of a recorded commit in
// the worktree and stages them; a symlink in the worktree is never written through.
func applyChange(wt *git.Worktree, root string, to *object.Tree, ch *object.Change) error {
	for _, name := range []string{ch.From.Name, ch.To.Name} {
		if name == "" {
			continue
		}
		if err := putPath(wt, root, to, name); err != nil {
			return err
		}
	}
	return nil
}

// recordedChain returns the recorded commits, oldest first: HEAD after and its
// first parents down to (not including) HEAD before.
func recordedChain(src storer.EncodedObjectStorer, eff *Effects) ([]*object.Commit, error) {
	var chain []*object.Commit
	h := plumbing.NewHash(eff.HeadAfter)
	for h.String() != eff.HeadBefore {
		if len(chain) >= maxEffectCommits {
			return nil, fmt.Errorf("more than %d commits between %s and %s", maxEffectCommits, eff.HeadBefore, eff.HeadAfter)
		}
		c, err := object.GetCommit(src, h)
		if err != nil {
			return nil, fmt.Errorf("recorded commit %s is not in the repository (kept under %s<key>): %w", h, EffectsRefPrefix, err)
		}
		chain = append([]*object.Commit{c}, chain...)
		if c.NumParents() == 0 {
			if eff.HeadBefore != "" {
				return nil, fmt.Errorf("recorded commit %s does not descend from %s", eff.HeadAfter, eff.HeadBefore)
			}
			break
		}
		h = c.ParentHashes[0]
	}
	return chain, nil
}
