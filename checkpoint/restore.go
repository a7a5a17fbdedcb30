package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/report"
)

// RestoreOptions are the inputs of a restore beyond the checkpoint itself.
type RestoreOptions struct {
	// Session names the refs/replay/pre-restore/<session> ref; Unix seconds of Now when empty.
	Session string
	// Marker is what the restore needs of the pipeline's .pipeline-active marker;
	// nil when there is none.
	Marker *Marker
	// Yes answers the confirmation: the preview is printed to Log and Confirm is not called.
	Yes bool
	// Confirm asks the user; nil or a false answer refuses the restore.
	Confirm func(ConfirmRequest) (bool, error)
	// NoPrompt says why no one can be asked (for example "stdin is not a terminal");
	// it is named in the refusal when Confirm is nil.
	NoPrompt string
	// Now is the clock for the safety checkpoint; time.Now when nil.
	Now func() time.Time
	// Log receives progress lines and warnings; discarded when nil.
	Log io.Writer
	// Fault, when set, is called at the restore's crash points: FaultSafetySaved
	// (the safety checkpoint and its ref written, nothing restored yet),
	// FaultFileWritten after each file the restore writes (file is its path) and
	// FaultFilesWritten (every file written, the branch not moved yet). A crash
	// simulator kills the process there; nil in the product. Calls never overlap
	// (the files are written in parallel, the hook is called one at a time).
	Fault func(point, file string)

	// kept are the commits RestoreKeeping applies again on top of the checkpoint:
	// the preview names them apart from the commits the branch leaves behind.
	kept []KeptCommit
}

// The restore's crash points (RestoreOptions.Fault).
const (
	FaultSafetySaved  = "restore-safety-saved"
	FaultFileWritten  = "restore-file-written"
	FaultFilesWritten = "restore-files-written"
)

// fault calls opts.Fault at point when it is set.
func (o RestoreOptions) fault(point, file string) {
	if o.Fault != nil {
		o.Fault(point, file)
	}
}

// Marker is what a restore needs to know of the pipeline's .pipeline-active
// marker: the branch the pipeline ran on, "" when the marker records none.
type Marker struct {
	Branch string
}

// ConfirmRequest is the question asked before a restore.
type ConfirmRequest struct {
	Checkpoint Checkpoint
	// Branch is the marker's branch, or the current branch when the marker has none.
	Branch string
	// BranchChecked reports whether the branch guard could compare branches.
	BranchChecked bool
	// Title and Description are the question, ready to show; Description holds the preview.
	Title, Description string
	// Preview is what the restore would do.
	Preview *RestorePreview
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	Checkpoint Checkpoint
	// Safety is the checkpoint holding the tree as it was before the restore.
	Safety *Checkpoint
	// SafetyRef is the project ref at its HEAD before the restore; empty when the
	// project had no HEAD.
	SafetyRef string
	// IndexRef is the project ref keeping the index as it was before the restore (a
	// commit whose tree is the index); empty when the project is not a repository.
	IndexRef     string
	PreviousHead plumbing.Hash
	// ProjectHead is the commit the project branch was moved to; zero when unmoved.
	ProjectHead plumbing.Hash
	Branch      string
	Written     int
	Removed     int
	Unchanged   int
	// UndoCommand restores the safety checkpoint: working tree, index, HEAD and branch.
	UndoCommand string
	Warnings    []string
	// Preview is what the restore was about to do when it was confirmed.
	Preview *RestorePreview
	// Commit is the project commit restored by RestoreCommit (Checkpoint is then
	// its tree written into the shadow, named by no ref); zero for a checkpoint.
	Commit plumbing.Hash
	// AlreadyThere is set when the tree and branch already matched the checkpoint:
	// nothing was asked, written or saved.
	AlreadyThere bool
}

// BranchMismatchError is the branch guard's refusal: the pipeline ran on Want but
// the project is on Have. Its kind is ErrRefused.
type BranchMismatchError struct{ Want, Have string }

// Error returns the message of the replay specification.
func (e *BranchMismatchError) Error() string {
	return fmt.Sprintf("Pipeline was running on branch %s but you are on %s. Switch to %s before resuming — restoring a checkpoint from a different branch would contaminate your working directory.", e.Want, e.Have, e.Want)
}

// Unwrap makes the error a refusal (ErrRefused).
func (e *BranchMismatchError) Unwrap() error { return ErrRefused }

// Unwrap makes an unsafe tree a refusal (ErrRefused).
func (e *UnsafeTreeError) Unwrap() error { return ErrRefused }

// Confirmation returns how a restore is confirmed: yes answers it; otherwise ask
// puts the question (nil when no one can be asked, and the restore is refused).
func Confirmation(yes bool, ask func(title, description string) (bool, error)) func(ConfirmRequest) (bool, error) {
	switch {
	case yes:
		return func(ConfirmRequest) (bool, error) { return true, nil }
	case ask != nil:
		return func(r ConfirmRequest) (bool, error) { return ask(r.Title, r.Description) }
	}
	return nil
}

// Announced wraps confirm so that announce runs once the user has said yes, never
// before the question; a nil confirm stays nil.
func Announced(confirm func(ConfirmRequest) (bool, error), announce func()) func(ConfirmRequest) (bool, error) {
	if confirm == nil {
		return nil
	}
	return func(r ConfirmRequest) (bool, error) {
		yes, err := confirm(r)
		if yes && err == nil {
			announce()
		}
		return yes, err
	}
}

// CheckBranch is the branch guard on the store's project: see GuardBranch. It
// returns the project's current branch ("" on a detached HEAD) too.
func (s *Store) CheckBranch(m *Marker) (current string, ok bool, err error) {
	current, err = s.CurrentBranch()
	if err != nil {
		return "", false, err
	}
	ok, err = GuardBranch(m, current)
	return current, ok, err
}

// GuardBranch is the one branch guard rule: an error of kind ErrRefused
// when the marker names a branch other than current (the project's branch, "" on a
// detached HEAD). ok is false when there is no marker or it records no branch
// (nothing could be checked).
func GuardBranch(m *Marker, current string) (ok bool, err error) {
	if m == nil || m.Branch == "" {
		return false, nil
	}
	if current != m.Branch {
		return true, &BranchMismatchError{Want: m.Branch, Have: displayBranch(current)}
	}
	return true, nil
}

// PreRestoreRefPrefix is where a restore keeps the project HEAD it replaced:
// refs/replay/pre-restore/<session>.
const PreRestoreRefPrefix = "refs/replay/pre-restore/"

// FreeSession returns session, or session-N with the smallest N from 2, such that
// the pre-restore ref of that name does not exist in the project repository: no
// restore overwrites the ref of an earlier one, which may be the only way back.
func FreeSession(project *git.Repository, session string) (string, error) {
	name, err := freeRefName(project.Storer, PreRestoreRefPrefix, session)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(name.String(), PreRestoreRefPrefix), nil
}

// Restore makes the working tree equal to cp: branch guard, confirmation, a
// pre-restore-safety checkpoint and a project ref, then the files, the project branch
// and index, and a verification that the tree hash equals the checkpoint's. Guard
// refusals and unsafe checkpoints return before anything is written.
func (s *Store) Restore(cp Checkpoint, opts RestoreOptions) (*RestoreReport, error) {
	// A restore reads the checkpoint's trees and every blob it writes: the packs stay
	// open until it returns, instead of an open and a close per object; the
	// project's store (HEAD's tree, the index's blobs) is made once.
	defer s.objects.keepPacksOpen()()
	defer s.keepProjectObjects()()
	r := &restoring{cp: cp, opts: opts, logw: opts.Log, now: time.Now, rep: &RestoreReport{Checkpoint: cp}}
	if r.logw == nil {
		r.logw = io.Discard
	}
	if opts.Now != nil {
		r.now = opts.Now
	}
	current, checked, err := s.CheckBranch(opts.Marker)
	if err != nil {
		return nil, err
	}
	if opts.Marker != nil && !checked {
		r.warn("the pipeline marker records no branch, so the branch guard cannot check you are on the pipeline's branch (you are on %s); confirm only if this is the right branch", displayBranch(current))
	}
	r.rep.Branch = current
	if err := s.prepareRestore(r); err != nil {
		return nil, err
	}
	if r.preview.AlreadyThere && r.rec.index.IsZero() && r.indexDone {
		r.rep.AlreadyThere = true
		fmt.Fprintf(r.logw, "Already at checkpoint %s (%s): the working tree and the branch match it, so nothing was restored and no safety checkpoint was taken.\n", cp.Short, cp.Reason)
		return r.rep, nil
	}
	if err := s.confirm(cp, current, opts, checked, r.preview, r.logw); err != nil {
		return nil, err
	}
	return s.writeRestore(r)
}

// restoring is one restore under way: its inputs, what it read before writing
// anything, and its report.
type restoring struct {
	cp   Checkpoint
	opts RestoreOptions
	logw io.Writer
	now  func() time.Time
	rep  *RestoreReport

	rec       safetyRecord
	idx       *index.Index
	target    map[string]treeFile
	preview   *RestorePreview
	seen      *snapshot
	indexDone bool
}

// warn records a warning in the report and prints it to the log.
func (r *restoring) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.rep.Warnings = append(r.rep.Warnings, msg)
	fmt.Fprintln(r.logw, "warning: "+msg)
}

// prepareRestore reads everything the restore decides on, writing nothing: the
// checkpoint's safety record, the project index, the target tree and the preview.
// The reads that do not need the working tree run while it is walked; a refusal
// of the safety record's branch still comes before any other error.
func (s *Store) prepareRestore(r *restoring) error {
	reads := s.startReads(r.cp, true)
	seen, walkErr := s.walkHashed()
	readErr := reads.wait()
	if reads.recErr != nil {
		return reads.recErr
	}
	r.rec = reads.rec
	if err := s.checkSafetyBranch(r.cp, r.rec); err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	if walkErr != nil {
		return walkErr
	}
	r.idx, r.target, r.seen = reads.idx, reads.target, seen
	var err error
	if r.preview, err = s.preview(r.cp, seen, r.target, r.idx, r.opts.kept); err != nil {
		return err
	}
	r.rep.Preview = r.preview
	// An undo (a safety checkpoint with a saved index) always runs: the index may differ.
	// So does a restore whose index is not HEAD's tree (a killed restore, staged work).
	r.indexDone = reads.indexDone
	return reads.headErr
}

// writeRestore carries out a confirmed restore: the safety checkpoint and refs,
// the files, the verification and the project branch and index.
func (s *Store) writeRestore(r *restoring) (*RestoreReport, error) {
	cp, rep := r.cp, r.rep
	// Walk first and refuse what would touch ignored files before the safety
	// checkpoint writes anything; then hash, store and plan for real. Without a
	// prompt the preview's walk is milliseconds old and is reused; after a prompt
	// the user may have changed files, so the tree is walked again.
	walkStart := time.Now().UnixNano()
	before := r.seen
	if !r.opts.Yes {
		var err error
		if before, err = s.walk(); err != nil {
			return nil, err
		}
	}
	if _, err := s.planRestore(before, r.target, cp); err != nil {
		return nil, err
	}
	// The safety checkpoint's new objects (files, trees, the saved index and the
	// commit) go into one pack, complete before its ref moves (commitSnapshot).
	if err := s.objects.beginPack(); err != nil {
		return nil, err
	}
	defer s.objects.dropPack()
	if err := s.finishSnapshot(before, walkStart, false); err != nil {
		return nil, err
	}
	plan, err := s.planRestore(before, r.target, cp)
	if err != nil {
		return nil, err
	}
	if err := s.saveSafety(before, r.idx, r.opts, r.now, rep, r.warn, r.logw); err != nil {
		return nil, err
	}
	r.opts.fault(FaultSafetySaved, "")
	start := time.Now().UnixNano()
	if err := s.applyPlan(plan, r.opts.fault); err != nil {
		return rep, fmt.Errorf("restoring checkpoint %s: %w; undo with: %s", cp.Short, err, rep.UndoCommand)
	}
	r.opts.fault(FaultFilesWritten, "")
	rep.Written, rep.Removed, rep.Unchanged = len(plan.write)+len(plan.chmod), len(plan.remove), plan.unchanged
	after, err := s.verifyRestore(before, plan, start)
	if err != nil {
		return rep, fmt.Errorf("verifying the restore of checkpoint %s: %w; undo with: %s", cp.Short, err, rep.UndoCommand)
	}
	if after.tree != cp.Tree {
		return rep, fmt.Errorf("restore verification failed: the working tree hashes to %s but checkpoint %s has tree %s; undo with: %s", after.tree.String()[:8], cp.Short, cp.Tree.String()[:8], rep.UndoCommand)
	}
	if err := s.moveProject(cp, r.rec, after, rep, r.warn); err != nil {
		return rep, fmt.Errorf("%w; the files are restored; undo with: %s", err, rep.UndoCommand)
	}
	return rep, nil
}

func displayBranch(b string) string {
	if b == "" {
		return "a detached HEAD"
	}
	return b
}

func (s *Store) confirm(cp Checkpoint, current string, opts RestoreOptions, checked bool, preview *RestorePreview, logw io.Writer) error {
	branch := current
	if opts.Marker != nil && opts.Marker.Branch != "" {
		branch = opts.Marker.Branch
	}
	var text strings.Builder
	if err := preview.Write(&text); err != nil {
		return err
	}
	req := ConfirmRequest{
		Checkpoint: cp, Branch: branch, BranchChecked: checked, Preview: preview,
		Title: fmt.Sprintf("Restore %s to checkpoint %s (%s, taken at %s, branch %s)?",
			s.projectDir, cp.Short, cp.Reason, report.Time(cp.Time), displayBranch(branch)),
		Description: text.String(),
	}
	if opts.Yes || opts.Confirm == nil {
		// Shown before acting, and before a refusal so the user sees what --yes would do.
		fmt.Fprint(logw, text.String())
	}
	if opts.Yes {
		return nil
	}
	if opts.Confirm == nil {
		cause := "no terminal to confirm on"
		if opts.NoPrompt != "" {
			cause = "cannot ask for a confirmation (" + opts.NoPrompt + ")"
		}
		return errkind.New(ErrRefused, fmt.Sprintf("%s: pass --yes to restore checkpoint %s (%s) in %s; nothing was changed", cause, cp.Short, cp.Reason, s.projectDir))
	}
	yes, err := opts.Confirm(req)
	if err != nil {
		return fmt.Errorf("asking to restore checkpoint %s: %w; nothing was changed", cp.Short, err)
	}
	if !yes {
		return errkind.New(ErrRefused, fmt.Sprintf("restore of checkpoint %s (%s) declined; nothing was changed", cp.Short, cp.Reason))
	}
	return nil
}

// saveSafety commits the pre-restore tree with the index (a second parent) and the
// branch, and sets refs/replay/pre-restore/<session> at the project HEAD and
// refs/replay/index/<session> at the saved index.
func (s *Store) saveSafety(before *snapshot, idx *index.Index, opts RestoreOptions, now func() time.Time, rep *RestoreReport, warn func(string, ...any), logw io.Writer) error {
	session := opts.Session
	if session == "" {
		session = strconv.FormatInt(now().Unix(), 10)
	}
	create := CreateOptions{Reason: SafetyReason, Source: "replay", Now: now, Always: true}
	if idx != nil {
		saved, err := s.saveIndex(idx, before, session, now().UTC().Truncate(time.Second), warn)
		if err != nil {
			return fmt.Errorf("saving the project index before the restore (nothing was changed): %w", err)
		}
		rep.IndexRef = saved.ref
		create.index = saved.commit
		if create.branch, err = s.headRef(); err != nil {
			return err
		}
	}
	safety, _, err := s.commitSnapshot(before, create)
	if err != nil {
		return fmt.Errorf("taking the pre-restore-safety checkpoint (nothing was changed): %w", err)
	}
	rep.Safety = safety
	head, err := s.projectHead()
	if err != nil {
		return err
	}
	rep.PreviousHead = head
	rep.UndoCommand = fmt.Sprintf("replay checkpoint restore %s --yes --repo %s --shadow %s", safety.Short, shellQuote(s.projectDir), shellQuote(s.shadowDir))
	if !head.IsZero() {
		pr, _ := s.projectRepo()
		// Never overwrite the ref of an earlier restore: it may be the only way back.
		name, err := freeRefName(pr.Storer, PreRestoreRefPrefix, session)
		if err != nil {
			return err
		}
		rep.SafetyRef = name.String()
		if err := setRef(s.projectDir, pr.Storer, name, head); err != nil {
			return fmt.Errorf("%s: writing %s: %w", s.projectDir, rep.SafetyRef, err)
		}
	}
	fmt.Fprintf(logw, "Safety checkpoint %s (%s) holds the working tree as it was", safety.Short, safety.Reason)
	if rep.SafetyRef != "" {
		fmt.Fprintf(logw, "; project HEAD %s is kept as %s", head.String()[:8], rep.SafetyRef)
	}
	if rep.IndexRef != "" {
		fmt.Fprintf(logw, "; the index (staged changes) as %s", rep.IndexRef)
	}
	fmt.Fprintf(logw, ".\nTo undo this restore: %s\n(it brings back the working tree, the index and the branch as they were)\n", rep.UndoCommand)
	return nil
}

// verifyRestore computes the tree of the working tree after a restore without
// walking it again: every file the restore wrote counts with the hash of the bytes
// written and its stat data after the write (mode included), every file whose mode
// alone changed is read back and hashed, every removed path must be gone, and the
// files it did not touch keep the state the pre-restore walk saw. It saves the stat
// cache and returns the new snapshot.
func (s *Store) verifyRestore(before *snapshot, plan *restorePlan, start int64) (*snapshot, error) {
	after := &snapshot{files: make(map[string]*fileState, len(before.files)), ignored: before.ignored}
	for p, f := range before.files {
		after.files[p] = f
	}
	for _, p := range plan.remove {
		abs := filepath.Join(s.projectDir, filepath.FromSlash(p))
		info, err := os.Lstat(abs)
		gone := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && info.IsDir())
		if !gone {
			return nil, fmt.Errorf("%s should have been removed but is still there", abs)
		}
		delete(after.files, p)
	}
	// A written file's hash is that of the bytes the restore wrote (checked against
	// the blob as they were written) and its stat data is from just after the write;
	// a file whose mode only changed is read back.
	touched := make([]*fileState, 0, len(plan.write)+len(plan.chmod))
	for i := range plan.written {
		touched = append(touched, &plan.written[i])
	}
	chmodded := make([]*fileState, len(plan.chmod))
	for i, t := range plan.chmod {
		chmodded[i] = &fileState{rel: t.Path}
	}
	err := parallel(len(chmodded), func(i int) error {
		f := chmodded[i]
		abs := filepath.Join(s.projectDir, filepath.FromSlash(f.rel))
		info, err := os.Lstat(abs)
		if err != nil {
			return fmt.Errorf("%s should have been written: %w", abs, err)
		}
		f.mode, f.size, f.mtime, f.extra = modeOf(info), info.Size(), info.ModTime().UnixNano(), extraOf(info)
		return s.hashFile(f)
	})
	if err != nil {
		return nil, err
	}
	touched = append(touched, chmodded...)
	for _, f := range touched {
		after.files[f.rel] = f
	}
	list := make([]*fileState, 0, len(after.files))
	for _, f := range after.files {
		list = append(list, f)
	}
	slices.SortFunc(list, func(a, b *fileState) int { return strings.Compare(a.rel, b.rel) })
	files := make([]treeFile, 0, len(list)+len(plan.kept))
	for _, f := range list {
		files = append(files, treeFile{Path: f.rel, Mode: f.mode, Hash: f.hash})
	}
	if len(plan.kept) > 0 {
		files = append(files, plan.kept...)
		slices.SortFunc(files, func(a, b treeFile) int { return strings.Compare(a.Path, b.Path) })
	}
	if after.tree, err = s.objects.buildTree(files); err != nil {
		return nil, err
	}
	if err := s.saveCache(start, list); err != nil {
		return nil, err
	}
	return after, nil
}
