package checkpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RestoreCommit restores project commit h as Restore restores a checkpoint:
// the branch guard and the confirmation, a pre-restore-safety checkpoint of
// the whole working tree and the refs/replay/pre-restore/<session> ref at the
// project HEAD (the undo printed), then the working tree made equal to h's
// tree (files h does not have removed unless ignored), the branch moved to h
// and the index rebuilt, verified against h's tree. It is the restore of a
// resume that has no checkpoint for its resume point while attempts that
// never completed left their work in the tree: the project's commit before
// them is the state to go back to. reason names that state in the report
// and the question (as a checkpoint's reason does). The target is written
// into the shadow repository as a commit no ref names (its tree copied from
// the project), so the shadow's checkpoint list does not change.
func (s *Store) RestoreCommit(h plumbing.Hash, reason string, opts RestoreOptions) (*RestoreReport, error) {
	if err := ValidateReason(reason); err != nil {
		return nil, err
	}
	cp, err := s.commitTarget(h, reason)
	if err != nil {
		return nil, err
	}
	rep, err := s.Restore(cp, opts)
	if rep != nil {
		rep.Commit = h
	}
	return rep, err
}

// commitTarget writes project commit h's tree into the shadow repository and
// a shadow commit of it recording h as its project head, and returns it as a
// checkpoint no ref names.
func (s *Store) commitTarget(h plumbing.Hash, reason string) (Checkpoint, error) {
	defer s.keepProjectObjects()()
	pr, err := s.projectRepo()
	if err != nil {
		return Checkpoint{}, err
	}
	if pr == nil {
		return Checkpoint{}, fmt.Errorf("%s is not a git repository: no commit to restore", s.projectDir)
	}
	commit, err := pr.CommitObject(h)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%s: reading the project commit %s: %w", s.projectDir, h.String()[:8], err)
	}
	files, err := s.commitFiles(h)
	if err != nil {
		return Checkpoint{}, err
	}
	proj := s.projectObjects()
	if proj == nil {
		return Checkpoint{}, fmt.Errorf("%s: the project's objects cannot be read (a linked worktree?): restore commit %s with git", s.projectDir, h.String()[:8])
	}
	if err := s.objects.beginPack(); err != nil {
		return Checkpoint{}, err
	}
	defer s.objects.dropPack()
	kept := files[:0:0]
	for _, f := range files {
		if f.Mode == filemode.Submodule {
			continue // a gitlink is no file of the tree
		}
		if err := s.objects.copyObject(proj, f.Hash); err != nil {
			return Checkpoint{}, err
		}
		kept = append(kept, f)
	}
	when := commit.Committer.When.UTC().Truncate(time.Second)
	return s.writeTarget(kept, reason, when, h)
}

// writeTarget writes, into the shadow repository's open pack, the tree of
// files and a commit of it that no ref names, recording head as its project
// commit and reason and when as a checkpoint's, finishes the pack, and returns
// the commit as the checkpoint a restore is given: a restore target that is
// not in the shadow's checkpoint list.
func (s *Store) writeTarget(files []treeFile, reason string, when time.Time, head plumbing.Hash) (Checkpoint, error) {
	tree, err := s.objects.buildTree(files)
	if err != nil {
		return Checkpoint{}, err
	}
	sig := object.Signature{Name: "replay", Email: "replay@localhost", When: when}
	msg := fmt.Sprintf("%s | %s | replay\n\n%s: %s\n", strings.TrimSpace(reason), when.UTC().Format(time.RFC3339), TrailerKey, head)
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	ch, err := s.writeCommit(c)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := s.objects.finishPack(); err != nil {
		return Checkpoint{}, err
	}
	c.Hash = ch
	cp, ok, _ := checkpointOf(c)
	if !ok {
		return Checkpoint{}, fmt.Errorf("the restore target (%s) cannot be read back", strings.TrimSpace(reason))
	}
	return cp, nil
}
