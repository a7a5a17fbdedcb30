package resume

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// Prompter asks the user a yes/no question or a choice; the command layer backs it
// with huh on a terminal.
type Prompter interface {
	Confirm(title, description string) (bool, error)
	Select(title string, options []string, def int) (int, error)
}

// RunOptions steer a resume beyond the decision itself.
type RunOptions struct {
	// Yes answers the restore confirmation.
	Yes bool
	// Prompter is nil when the user cannot be asked (no terminal, CI).
	Prompter Prompter
	// NoPrompt says why Prompter is nil (for example "stdin is not a terminal"),
	// named in the refusal.
	NoPrompt string
	Now      func() time.Time
	// Session names this replay run (Unix seconds of Now when empty).
	Session string
	// Tmp is $TMPDIR, where the build-mode file lives.
	Tmp string
	// Log receives progress and warnings (stderr).
	Log io.Writer
	// Fault is the restore's crash-point hook (checkpoint.RestoreOptions.Fault);
	// nil in the product.
	Fault func(point, file string)
}

// Result is what a resume did.
type Result struct {
	Analysis *Analysis
	Restore  *checkpoint.RestoreReport
	// KeptDiskState is set when the user chose to resume on the current disk state.
	KeptDiskState bool
	State         *State
	Session       string
	// StartedFresh is set when the user chose to start the pipeline fresh: its
	// markers were archived (Archived lists old -> new paths) and nothing else ran.
	StartedFresh bool
	Archived     [][2]string
	// Unverified is set when the user chose the current disk state although
	// verification failed back to the start: nothing was verified or restored.
	Unverified bool
	// Safety holds the tree as it was when the resume kept the disk state with
	// work to re-execute: the re-executed agents write over what the crashed
	// attempts left, and no restore's safety checkpoint keeps it.
	Safety *checkpoint.Checkpoint
}

// The choices offered when no boundary can be verified or restored; abort is the
// default.
const (
	choiceDiskState = "Resume with the current disk state (risky: nothing is restored)"
	choiceFresh     = "Start fresh (archive the pipeline marker and start the pipeline again; nothing is deleted)"
	choiceAbort     = "Abort (change nothing)"
)

// noBoundaryChoices are the choices of the no-checkpoint menu, abort last and default.
var noBoundaryChoices = []string{choiceDiskState, choiceFresh, choiceAbort}

const defaultChoice = 2

// Run carries out SPEC §4 steps 5–7 on a decided analysis: guard, confirm, restore
// behind a safety checkpoint and ref, and reconstruct the orchestrator's state. It
// appends nothing to the manifest: re-dispatch is the caller's next step.
func Run(a *Analysis, o RunOptions) (*Result, error) {
	pl := a.Pipeline
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	res := &Result{Analysis: a, Session: o.Session}
	if res.Session == "" {
		res.Session = NewSession(pl, o.Now())
	}
	if pl.ProjectErr != nil {
		return nil, pl.ProjectErr
	}
	if err := guardBranch(pl); err != nil {
		return nil, err
	}
	switch {
	case a.NoVerifiedBoundary:
		if err := chooseWithoutBoundary(pl, a, o, res); err != nil {
			return nil, err
		}
	case a.NoCheckpoint || a.Checkpoint == nil:
		if err := confirmDiskState(pl, a, o, res); err != nil {
			return nil, err
		}
	default:
		keep, err := othersKept(pl, a)
		if err != nil {
			return nil, err
		}
		rep, err := restore(pl, a, o, res.Session, keep)
		if err != nil {
			return nil, err
		}
		res.Restore = rep
	}
	if res.KeptDiskState && !res.StartedFresh && !res.Unverified && a.Undo != nil && pl.Store != nil {
		// nothing restores the tree at the resume point, and attempts that
		// never completed left their work in it: back to the commit before them
		rep, err := undoAttempts(pl, a, o, res.Session)
		if err != nil {
			return nil, err
		}
		res.Restore, res.KeptDiskState = rep, false
	}
	if res.KeptDiskState && !res.StartedFresh && len(a.Items) > 0 && pl.Store != nil {
		if err := keepSafety(pl, o, res); err != nil {
			return nil, err
		}
	}
	if res.StartedFresh {
		archived, err := ArchiveMarkers(pl, res.Session)
		if err != nil {
			return nil, err
		}
		res.Archived = archived
		return res, nil
	}
	SetAsideTornTail(pl, o)
	var head plumbing.Hash
	if res.Restore != nil {
		head = res.Restore.ProjectHead
	}
	res.State = Reconstruct(a, o.Tmp, head)
	if res.Unverified {
		res.State.MarkUnverified()
	}
	return res, nil
}

// NewSession names a replay run: the Unix seconds of now, with a "-N" suffix when a
// pre-restore ref of that name exists already, so no run overwrites another's ref.
func NewSession(pl *pipeline.Pipeline, now time.Time) string {
	base := strconv.FormatInt(now.Unix(), 10)
	if pl.Project == nil {
		return base
	}
	session, err := checkpoint.FreeSession(pl.Project, base)
	if err != nil {
		return base // the restore names its ref again, and reports the error there
	}
	return session
}

// GuardBranch is Run's branch guard for a caller that runs its own checks
// first (the preflight): on another branch than the pipeline's the resume
// refuses before any of them, naming the run's branch (exit 3), whatever else
// would stop it. nil when the project cannot be read (Run reports that).
func GuardBranch(a *Analysis) error {
	if a.Pipeline == nil || a.Pipeline.ProjectErr != nil {
		return nil
	}
	return guardBranch(a.Pipeline)
}

// guardBranch refuses to go on when the project is on another branch than the
// pipeline's, before anything else happens (checkpoint.GuardBranch's rule).
func guardBranch(pl *pipeline.Pipeline) error {
	if pl.Project == nil {
		return nil
	}
	m := pl.CheckpointMarker()
	if m == nil || m.Branch == "" {
		return nil
	}
	head, err := pl.Project.Head()
	if err != nil {
		return fmt.Errorf("%s: reading the project HEAD: %w", pl.ProjectDir, err)
	}
	current := ""
	if head.Name().IsBranch() {
		current = head.Name().Short()
	}
	_, err = checkpoint.GuardBranch(m, current)
	return err
}

func chooseWithoutBoundary(pl *pipeline.Pipeline, a *Analysis, o RunOptions, res *Result) error {
	msg := fmt.Sprintf("No verified boundary in %s: verification failed back to the start of the pipeline (%s, first: seq %d %s — %s)",
		pl.ProjectDir, report.Count(len(a.Failures), "failed check"), a.Failures[0].Seq, a.Failures[0].Check, report.Safe(a.Failures[0].Detail))
	if pl.Project == nil {
		// The usual cause: without the project's repository no commit can be verified.
		msg = fmt.Sprintf("%s is not a git repository, so no commit could be verified (pass --repo with the project's repository). %s", pl.ProjectDir, msg)
	}
	if o.Prompter == nil {
		return errkind.Errorf(ErrNotConfirmed, "%s. %s, so replay cannot ask whether to resume with the current disk state or start fresh: run it where it can prompt; nothing was changed", msg, noPromptCause(o))
	}
	i, err := o.Prompter.Select(msg+". What now?", noBoundaryChoices, defaultChoice)
	if err != nil {
		return fmt.Errorf("asking how to resume: %w; nothing was changed", err)
	}
	switch i {
	case 0:
		res.KeptDiskState, res.Unverified = true, true
		a.Resume = a.Detected
		a.resplit()
	case 1:
		res.StartedFresh = true
	default:
		return errkind.New(ErrNotConfirmed, "aborted; nothing was changed")
	}
	return nil
}

func confirmDiskState(pl *pipeline.Pipeline, a *Analysis, o RunOptions, res *Result) error {
	res.KeptDiskState = true
	if a.Resume.Start {
		return nil // starting from the beginning restores nothing
	}
	q := fmt.Sprintf("No checkpoint to restore for %s: the file state of %s cannot be guaranteed.", a.Resume.Label(), pl.ProjectDir)
	switch {
	case o.Yes:
		fmt.Fprintf(o.Log, "warning: %s Resuming with the current disk state (--yes).\n", q)
		return nil
	case o.Prompter == nil:
		return errkind.Errorf(ErrNotConfirmed, "%s %s, so resuming on the current disk state cannot be confirmed: pass --yes to resume on it; nothing was changed", q, noPromptCause(o))
	}
	i, err := o.Prompter.Select(q+" What now?", noBoundaryChoices, defaultChoice)
	if err != nil {
		return fmt.Errorf("asking how to resume: %w; nothing was changed", err)
	}
	switch i {
	case 0:
		return nil
	case 1:
		res.KeptDiskState, res.StartedFresh = false, true
		return nil
	}
	return errkind.New(ErrNotConfirmed, "aborted; nothing was changed")
}

// keepSafety takes a pre-restore-safety checkpoint of the whole tree before a
// resume that keeps the disk state re-executes work on it: the agents write
// over what the crashed attempts left (a half-written file, an edit), which is
// then kept nowhere else. Nothing is lost: every destructive step is preceded
// by a checkpoint it can be undone from, and the undo is printed.
func keepSafety(pl *pipeline.Pipeline, o RunOptions, res *Result) error {
	cp, _, err := pl.Store.Create(checkpoint.CreateOptions{Reason: checkpoint.SafetyReason, Source: "replay", Now: o.Now, Always: true})
	if err != nil {
		return fmt.Errorf("taking the pre-restore-safety checkpoint of %s before re-executing on the current disk state (nothing was changed): %w", pl.ProjectDir, err)
	}
	res.Safety = cp
	fmt.Fprintf(o.Log, "Safety checkpoint %s (%s) holds the working tree as it was before the work is re-executed on it; to bring it back: replay checkpoint restore %s --yes --repo %s --shadow %s\n",
		cp.Short, cp.Reason, cp.Short, report.Safe(pl.ProjectDir), report.Safe(pl.ShadowDir))
	return nil
}

func restore(pl *pipeline.Pipeline, a *Analysis, o RunOptions, session string, keep []plumbing.Hash) (*checkpoint.RestoreReport, error) {
	cp, err := pl.Store.Find(a.Checkpoint.Hash)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", a.Checkpoint.Short, err)
	}
	announce := fmt.Sprintf("Restoring the project directory %s to checkpoint %s (%s).\n", pl.ProjectDir, a.Checkpoint.Short, report.Safe(a.Checkpoint.Reason))
	opts := restoreOptions(pl, o, session, announce)
	announceKeeping(o.Log, a, keep)
	rep, kept, err := pl.Store.RestoreKeeping(*cp, keep, othersInFlightAt(pl, a.Checkpoint.Time), opts)
	logKept(o.Log, rep, kept)
	return rep, err
}

// restoreOptions are the options of a restore the resume makes: asked through
// o's prompter (or not at all with --yes), announce printed before it starts
// (at once with --yes, else once the user agreed).
func restoreOptions(pl *pipeline.Pipeline, o RunOptions, session, announce string) checkpoint.RestoreOptions {
	var ask func(string, string) (bool, error)
	if o.Prompter != nil {
		ask = o.Prompter.Confirm
	}
	restoring := func() { fmt.Fprint(o.Log, announce) }
	if o.Yes {
		restoring()
	}
	return checkpoint.RestoreOptions{
		Session: session, Marker: pl.CheckpointMarker(), Yes: o.Yes, Confirm: checkpoint.Announced(checkpoint.Confirmation(false, ask), restoring),
		NoPrompt: o.NoPrompt, Now: o.Now, Log: o.Log, Fault: o.Fault,
	}
}

// noPromptCause names why the user cannot be asked.
func noPromptCause(o RunOptions) string {
	if o.NoPrompt != "" {
		return "There is no terminal to ask on (" + o.NoPrompt + ")"
	}
	return "There is no terminal to ask on"
}

// resplit recomputes the skip and re-execute lists after the resume point moved.
func (a *Analysis) resplit() {
	a.Skip, a.Redo, a.Preserved = nil, nil, 0
	a.split()
}

// filesModified lists the files the pipeline changed from its baseline commit to
// head (zero: the project's current HEAD); nil when either is unknown.
func filesModified(pl *pipeline.Pipeline, baseline string, head plumbing.Hash) []string {
	if pl.Project == nil || baseline == "" {
		return nil
	}
	baseHash, err := pl.Project.ResolveRevision(plumbing.Revision(baseline))
	if err != nil {
		return nil
	}
	base, err := pl.Project.CommitObject(*baseHash)
	if err != nil {
		return nil
	}
	if head.IsZero() {
		ref, err := pl.Project.Head()
		if err != nil {
			return nil
		}
		head = ref.Hash()
	}
	tip, err := pl.Project.CommitObject(head)
	if err != nil {
		return nil
	}
	return changedPaths(base, tip)
}

func changedPaths(from, to *object.Commit) []string {
	a, err := from.Tree()
	if err != nil {
		return nil
	}
	b, err := to.Tree()
	if err != nil {
		return nil
	}
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range changes {
		for _, name := range []string{c.From.Name, c.To.Name} {
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// SetAsideTornTail leaves the run's manifests ending at a line's end before
// the work goes back to the skill (Run does, and a resume with nothing to
// restore or re-execute must too: the skill goes on from there): a crash that cut the manifest's last line
// left a fragment with no newline, and the skill's dispatch.py appends its next
// line blindly, glued onto the fragment. That line is then unreadable: the
// attempt it records looks as if it never started, and the next resume
// re-executes its work on top of what the attempt left (crash simulator seeds
// 4089, 6689, 7016: a unit done twice), while dispatch.py itself refuses every
// later seq. The fragment moves to the manifest's torn sidecar (as replay's own
// appends move it), its bytes kept, in the manifest replay read and in the live
// dispatch directory the run's own marker names (where the skill appends); a
// manifest that cannot be read or locked is left as it is, with a warning.
// Another session's manifest is never touched: that run may be live.
func SetAsideTornTail(pl *pipeline.Pipeline, o RunOptions) {
	paths := []string{pl.Location.ManifestPath}
	if live := liveDispatchDir(pl, o.Tmp); live != "" && filepath.Clean(live) != filepath.Clean(pl.DispatchDir) {
		if p := filepath.Join(live, manifest.ManifestFile); fileExists(p) {
			paths = append(paths, p)
		}
	}
	for _, path := range paths {
		r, err := manifest.SetAsideTornTail(path)
		switch {
		case err != nil:
			fmt.Fprintf(o.Log, "replay: warning: %v; its torn last line stays, and the skill's next manifest line will be glued onto it (replay manifest repair sets it aside)\n", err)
		case r.SetAside > 0:
			fmt.Fprintf(o.Log, "%s: its torn last line (%d bytes) was moved to %s, so that the skill's next manifest line is whole\n", path, r.SetAside, r.Sidecar)
		}
	}
}

// liveDispatchDir is the dispatch directory the run's own marker names
// (validated: inside the scratch dir or a temporary root), "" when the marker
// is absent or names another session.
func liveDispatchDir(pl *pipeline.Pipeline, tmp string) string {
	m := pl.Marker
	if m == nil || m.DispatchDir == "" || pl.ScratchDir == "" {
		return ""
	}
	sid := pl.Location.SessionID
	own := m.PipelineID == sid
	if m.PipelineID == "" {
		msid, _ := manifest.SessionOfDir(m.DispatchDir)
		own = msid == sid
	}
	if !own || sid == "" {
		return ""
	}
	live, err := manifest.ValidateDispatchDir(filepath.Join(pl.ScratchDir, manifest.MarkerFile), m.DispatchDir, pl.ScratchDir, tmp, pl.SysTmp)
	if err != nil {
		return ""
	}
	return live
}

// fileExists reports whether path is an existing regular file (not followed
// through a link).
func fileExists(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}
