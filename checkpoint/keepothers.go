package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// KeptCommit is a project commit that a restore kept by applying it again on
// top of the restored base: Old is the commit as it was (still reachable from
// the restore's refs/replay/pre-restore/<session> ref), New its copy on the
// restored branch.
type KeptCommit struct {
	Old, New plumbing.Hash
	Subject  string
}

// RestoreKeeping restores cp as Restore does, keeping the project commits
// keep (oldest first; each with one parent, made after cp's project commit):
// another session's work that the restore must not undo. Each is applied again
// on top of cp's project commit, in order, as a new commit with the same
// message, author and committer whose tree is its new parent's tree with every
// path the commit changed set as in that commit; the working tree is restored
// to cp's tree with those paths set as in the last kept commit that changed
// them, and the branch moves to the last new commit. The caller has checked
// that no commit this restore undoes changed those paths (the re-applied
// commits then hold exactly the kept work). Everything else is Restore's: the
// branch guard, the confirmation, the pre-restore-safety checkpoint and the
// refs/replay/pre-restore/<session> ref at the old branch tip (so the commits
// as they were, and the work undone, stay reachable; the undo is printed),
// and the verification of the tree. With no commit to keep it is Restore.
//
// With leaveUncommitted, every path whose state in cp's tree is not its state
// in cp's project commit (work uncommitted when cp was taken: another session's
// attempt in flight then) is left as it is now instead, unless a kept commit
// changed it.
func (s *Store) RestoreKeeping(cp Checkpoint, keep []plumbing.Hash, leaveUncommitted bool, opts RestoreOptions) (*RestoreReport, []KeptCommit, error) {
	if len(keep) == 0 && !leaveUncommitted {
		rep, err := s.Restore(cp, opts)
		return rep, nil, err
	}
	target, kept, err := s.keepingTarget(cp, keep, leaveUncommitted)
	if err != nil {
		return nil, nil, fmt.Errorf("keeping another session's commits over checkpoint %s (nothing was changed): %w", cp.Short, err)
	}
	target.Short = cp.Short // what the user is told: the checkpoint asked for
	opts.kept = kept
	rep, err := s.Restore(target, opts)
	if rep != nil {
		rep.Checkpoint = cp
	}
	if err != nil {
		return rep, nil, err
	}
	return rep, kept, nil
}

// keepingTarget writes the kept commits again on top of cp's project commit
// (into the project repository; no ref names them until the restore moves the
// branch) and, into the shadow repository, a commit no ref names: cp's tree
// with the kept paths set, recording the last new commit as its project head.
// It returns that commit as the checkpoint to restore.
func (s *Store) keepingTarget(cp Checkpoint, keep []plumbing.Hash, leaveUncommitted bool) (Checkpoint, []KeptCommit, error) {
	defer s.keepProjectObjects()()
	pr, err := s.projectRepo()
	if err != nil {
		return Checkpoint{}, nil, err
	}
	proj := s.projectObjects()
	if pr == nil || proj == nil {
		return Checkpoint{}, nil, fmt.Errorf("%s: the project's repository cannot be written", s.projectDir)
	}
	base, onBranch, err := s.keepingBase(pr, proj, cp, keep)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	if base.IsZero() {
		return Checkpoint{}, nil, fmt.Errorf("checkpoint %s names no project commit to apply them on", cp.Short)
	}
	files, err := s.commitFiles(base)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	tip := map[string]treeFile{}
	for _, f := range files {
		tip[f.Path] = f
	}
	committed := maps.Clone(tip)
	changed := map[string]*treeFile{} // the kept paths: their last state, nil when removed
	parent := base
	var kept []KeptCommit
	for _, h := range keep {
		c, err := pr.CommitObject(h)
		if err != nil {
			return Checkpoint{}, nil, fmt.Errorf("reading commit %s: %w", h.String()[:8], err)
		}
		if len(c.ParentHashes) != 1 {
			return Checkpoint{}, nil, fmt.Errorf("commit %s has %d parents: only a commit with one parent can be applied again", h.String()[:8], len(c.ParentHashes))
		}
		paths, err := commitChanges(proj, c)
		if err != nil {
			return Checkpoint{}, nil, err
		}
		if onBranch[h] {
			// Below base on the branch already: its files are base's.
			for p, f := range paths {
				changed[p] = f
			}
			kept = append(kept, KeptCommit{Old: h, New: h, Subject: strings.SplitN(c.Message, "\n", 2)[0]})
			continue
		}
		for p, f := range paths {
			if f == nil {
				delete(tip, p)
			} else {
				tip[p] = *f
			}
			changed[p] = f
		}
		next, err := s.writeKept(proj, c, parent, tip)
		if err != nil {
			return Checkpoint{}, nil, err
		}
		kept = append(kept, KeptCommit{Old: h, New: next, Subject: strings.SplitN(c.Message, "\n", 2)[0]})
		parent = next
	}
	// The new commits' bytes are on disk before the restore's ref names them.
	if err := proj.syncLoose(); err != nil {
		return Checkpoint{}, nil, err
	}
	cpFiles, err := s.objects.readTreeEntries(cp.Tree)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	if err := s.objects.beginPack(); err != nil {
		return Checkpoint{}, nil, err
	}
	defer s.objects.dropPack()
	if leaveUncommitted {
		if err := s.leaveAsNow(cpFiles, committed, changed); err != nil {
			return Checkpoint{}, nil, err
		}
	}
	for p, f := range changed {
		if f == nil {
			delete(cpFiles, p)
			continue
		}
		if f.Mode != filemode.Submodule {
			if err := s.objects.copyObject(proj, f.Hash); err != nil {
				return Checkpoint{}, nil, err
			}
		}
		cpFiles[p] = *f
	}
	target, err := s.writeTarget(slices.Collect(maps.Values(cpFiles)), cp.Reason, cp.Time, parent)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	return target, kept, nil
}

// keepingBase returns the project commit the kept commits go on top of: cp's
// project commit (Store.ProjectHeadAt), or, when cp records none, the newest
// commit on the branch whose changes since it cp holds, the kept commits'
// paths not counted, with the kept commits that lie below it on the branch
// (onBranch: not applied again). Crash simulator seed 11142: a first resume
// restored pre-wave-1 keeping the other session's fix, made after pre-wave-2,
// so the fix lies below this run's task 1 commit made again; restoring
// pre-wave-2 later, the fix, which pre-wave-2 lacks, kept task 1's commit from
// counting as held, and the branch moved back below it: the commit was lost.
func (s *Store) keepingBase(pr *git.Repository, proj *objectStore, cp Checkpoint, keep []plumbing.Hash) (plumbing.Hash, map[plumbing.Hash]bool, error) {
	base, err := s.ProjectHeadAt(cp)
	if err != nil || base.IsZero() || !cp.ProjectHead.IsZero() || len(keep) == 0 {
		return base, nil, err
	}
	head, err := s.projectHead()
	if err != nil || head.IsZero() || head == base {
		return base, nil, err
	}
	ignore := map[string]bool{}
	for _, h := range keep {
		c, err := pr.CommitObject(h)
		if err != nil {
			return base, nil, nil
		}
		paths, err := commitChanges(proj, c)
		if err != nil {
			return base, nil, nil
		}
		for p := range paths {
			ignore[p] = true
		}
	}
	held, err := s.heldSince(pr, cp, head, base, ignore)
	if err != nil || held == base {
		return base, nil, err
	}
	onBranch := map[plumbing.Hash]bool{}
	for h, n := held, 0; h != base && n < maxHeldWalk; n++ {
		c, err := pr.CommitObject(h)
		if err != nil || c.NumParents() == 0 {
			return base, nil, nil
		}
		onBranch[h] = true
		h = c.ParentHashes[0]
	}
	return held, onBranch, nil
}

// commitChanges returns the paths commit c changed from its parent, each with
// its state in c (nil: removed).
func commitChanges(proj *objectStore, c *object.Commit) (map[string]*treeFile, error) {
	pc, err := c.Parent(0)
	if err != nil {
		return nil, fmt.Errorf("reading the parent of commit %s: %w", c.Hash.String()[:8], err)
	}
	from, err := proj.readTreeEntries(pc.TreeHash)
	if err != nil {
		return nil, err
	}
	to, err := proj.readTreeEntries(c.TreeHash)
	if err != nil {
		return nil, err
	}
	out := map[string]*treeFile{}
	for p, f := range to {
		if g, ok := from[p]; !ok || g != f {
			f := f
			out[p] = &f
		}
	}
	for p := range from {
		if _, ok := to[p]; !ok {
			out[p] = nil
		}
	}
	return out, nil
}

// writeKept writes commit c again into the project repository: parent as its
// parent, files as its tree, its message, author and committer unchanged.
func (s *Store) writeKept(proj *objectStore, c *object.Commit, parent plumbing.Hash, files map[string]treeFile) (plumbing.Hash, error) {
	tree, err := proj.buildTree(slices.Collect(maps.Values(files)))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: writing the tree of commit %s again: %w", s.projectDir, c.Hash.String()[:8], err)
	}
	n := &object.Commit{Author: c.Author, Committer: c.Committer, Message: c.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{parent}, Encoding: c.Encoding}
	data, err := encodeCommit(n)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := proj.write(plumbing.CommitObject, data)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: writing commit %s again: %w", s.projectDir, c.Hash.String()[:8], err)
	}
	return h, nil
}

// leaveAsNow sets, in the restore target files (cp's tree), every path whose
// state there differs from its state in cp's project commit (committed) and
// that no kept commit changed, to its state on disk now: gone when it is gone,
// its bytes and mode (a blob written into the shadow repository) when it is a
// file or symlink. Such a path held work uncommitted when cp was taken; a
// directory or other entry there now keeps cp's state.
func (s *Store) leaveAsNow(files, committed map[string]treeFile, changed map[string]*treeFile) error {
	for p, f := range files {
		if _, kept := changed[p]; kept {
			continue
		}
		if c, ok := committed[p]; ok && c == f {
			continue
		}
		abs := filepath.Join(s.projectDir, filepath.FromSlash(p))
		info, err := os.Lstat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			delete(files, p)
			continue
		case err != nil:
			return err
		case !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0:
			continue
		}
		now := &fileState{rel: p, mode: modeOf(info)}
		if err := s.readAndHash(now, true); err != nil {
			return err
		}
		files[p] = treeFile{Path: p, Mode: now.mode, Hash: now.hash}
	}
	return nil
}
