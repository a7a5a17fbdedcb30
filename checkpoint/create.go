package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CreateOptions says why a checkpoint is taken and by whom.
type CreateOptions struct {
	// Reason is the checkpoint reason, such as pre-wave-2; required.
	Reason string
	// Source names what took the checkpoint, such as build; "replay" when empty.
	Source string
	// Now is the clock for the checkpoint time; time.Now when nil.
	Now func() time.Time
	// Always takes the checkpoint even when the tree equals the newest one's: the
	// pre-restore safety checkpoint always records its own reason and project head.
	Always bool

	// index and branch are recorded by the safety checkpoint only: the saved index
	// commit (a second parent and a trailer) and what the project HEAD pointed to.
	index  plumbing.Hash
	branch string
}

// SafetyReason is the reason of the checkpoint taken before every restore.
const SafetyReason = "pre-restore-safety"

// ValidateReason reports why reason cannot be a checkpoint reason, or nil.
func ValidateReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return errors.New("checkpoint reason is empty; pass one such as --reason pre-wave-1")
	case strings.ContainsAny(reason, "|\n\r"):
		return fmt.Errorf("checkpoint reason %q contains '|' or a line break; use letters, digits and dashes", reason)
	}
	return nil
}

// Create snapshots the whole working tree (untracked files included, ignored files
// and .git excluded) as a new checkpoint. created is false, and the newest checkpoint
// is returned, when the tree is unchanged since that checkpoint.
func (s *Store) Create(opts CreateOptions) (*Checkpoint, bool, error) {
	if err := ValidateReason(opts.Reason); err != nil {
		return nil, false, err
	}
	if strings.ContainsAny(opts.Source, "|\n\r") {
		return nil, false, fmt.Errorf("checkpoint source %q contains '|' or a line break; use letters, digits and dashes", opts.Source)
	}
	// The snapshot's new objects go into one pack, complete before the stat cache
	// names them (finishSnapshot) and before a ref does (commitSnapshot).
	if err := s.objects.beginPack(); err != nil {
		return nil, false, err
	}
	defer s.objects.dropPack()
	snap, err := s.takeSnapshot(true)
	if err != nil {
		return nil, false, err
	}
	return s.commitSnapshot(snap, opts)
}

func (s *Store) commitSnapshot(snap *snapshot, opts CreateOptions) (*Checkpoint, bool, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	source := strings.TrimSpace(opts.Source)
	if source == "" {
		source = "replay"
	}
	branch, parent, err := s.shadowTip()
	if err != nil {
		return nil, false, err
	}
	if !parent.IsZero() {
		c, err := s.shadowCommit(parent)
		if err != nil {
			return nil, false, fmt.Errorf("%s: reading the newest checkpoint %s: %w", s.shadowDir, parent, err)
		}
		if c.TreeHash == snap.tree && !opts.Always {
			cp, _, _ := checkpointOf(c)
			return &cp, false, nil
		}
	}
	projectHead, err := s.projectHead()
	if err != nil {
		return nil, false, err
	}
	if parent.IsZero() {
		// A second parent needs a first: the log would walk into the index commit.
		// A restore always has a checkpoint before its safety checkpoint.
		opts.index = plumbing.ZeroHash
	}
	when := now().UTC().Truncate(time.Second)
	msg := fmt.Sprintf("%s | %s | %s\n", strings.TrimSpace(opts.Reason), when.Format(time.RFC3339), source)
	if !projectHead.IsZero() {
		msg += fmt.Sprintf("\n%s: %s\n", TrailerKey, projectHead)
	}
	msg += safetyTrailers(opts, projectHead.IsZero())
	sig := object.Signature{Name: "replay", Email: "replay@localhost", When: when}
	commit := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: snap.tree}
	if !parent.IsZero() {
		commit.ParentHashes = []plumbing.Hash{parent}
	}
	if !opts.index.IsZero() {
		// The index commit is the second parent, so the log (first parents) skips it.
		commit.ParentHashes = append(commit.ParentHashes, opts.index)
	}
	h, err := s.writeCommit(commit)
	if err != nil {
		return nil, false, err
	}
	if err := s.objects.finishPack(); err != nil {
		return nil, false, err
	}
	if err := setRef(s.shadowDir, s.storage, branch, h); err != nil {
		return nil, false, fmt.Errorf("%s: moving %s to the new checkpoint: %w", s.shadowDir, branch, err)
	}
	commit.Hash = h
	cp, _, _ := checkpointOf(commit)
	if err := s.appendManifest(cp); err != nil {
		return &cp, true, err
	}
	cp.InManifest = true
	return &cp, true, nil
}

// shadowTip returns the ref new checkpoints go on and the newest checkpoint (zero
// when there is none yet).
func (s *Store) shadowTip() (plumbing.ReferenceName, plumbing.Hash, error) {
	head, err := s.storage.Reference(plumbing.HEAD)
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("%s: reading the shadow HEAD: %w", s.shadowDir, err)
	}
	name := plumbing.HEAD
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	ref, err := s.repo.Reference(name, true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return name, plumbing.ZeroHash, nil
	}
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("%s: reading %s: %w", s.shadowDir, name, err)
	}
	return name, ref.Hash(), nil
}

func (s *Store) writeCommit(c *object.Commit) (plumbing.Hash, error) {
	data, err := encodeCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objects.write(plumbing.CommitObject, data)
}

// safetyTrailers returns the branch and index trailers of a safety checkpoint, with
// the blank line that starts the trailer block when there is no Project-Head line.
func safetyTrailers(opts CreateOptions, noHead bool) string {
	var b strings.Builder
	if opts.branch != "" {
		fmt.Fprintf(&b, "%s: %s\n", BranchTrailer, opts.branch)
	}
	if !opts.index.IsZero() {
		fmt.Fprintf(&b, "%s: %s\n", IndexTrailer, opts.index)
	}
	if b.Len() > 0 && noHead {
		return "\n" + b.String()
	}
	return b.String()
}

// encodeCommit returns the raw content of commit c.
func encodeCommit(c *object.Commit) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return nil, fmt.Errorf("encoding the checkpoint commit: %w", err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
