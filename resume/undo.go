package resume

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// Undo is what a resume that no checkpoint restores undoes before it
// re-executes: the work in the tree of mutating attempts that started (a
// manifest line: their agents ran) and never completed. Re-executed on top of
// it, an attempt's work was done twice (its partial commit, a line appended
// again) or on the wrong base. The state to go back to is the project's commit
// before the first of them: the parent of the oldest commit in Above, or the
// project HEAD when Above is empty. Every commit in Above is provably work
// the resume re-executes: a partial commit of one of the attempts (Partial),
// or the commit of a completed item that lies above one and is re-executed
// with it (no longer kept).
type Undo struct {
	// Attempts are the latest attempts whose work is undone, in seq order.
	Attempts []*pipeline.Dispatch
	// Since is when the first of them started (its header time, or for a
	// dispatch file that is gone its place in the manifest).
	Since time.Time
	// Above are the project commits made since then, newest first.
	Above []pipeline.Commit
}

// undoUnrestored decides Undo when nothing restores the tree at the resume
// point (no checkpoint for it or an earlier boundary, or the start of the
// pipeline; not when the user overrode the resume point or an A/B replay
// chose it, nor when no boundary verified: then the user chooses). When a
// commit made since the first such attempt started is not provably work the
// resume re-executes (another session's, one no dispatch claims that names
// another task, the verified work of an item before the resume point), or an
// attempt has no time to bound its work, nothing is undone and a warning
// says so: the tree is kept as it is, as before.
func (a *Analysis) undoUnrestored(in Input, v *verifier) {
	if a.onDisk == nil || a.Checkpoint != nil || a.NoVerifiedBoundary || a.Resume == nil || a.Resume.End || in.Log == nil {
		return
	}
	var open []*pipeline.Dispatch
	var since time.Time
	for _, it := range a.Items {
		last := it.Attempts[len(it.Attempts)-1]
		if !last.Recorded || last.Done() || last.Class != templates.RoleMutating {
			continue
		}
		t := last.PlaceTime()
		if t.IsZero() {
			a.warn(fmt.Sprintf("nothing restores the tree at %s and seq %d (%s) started and never completed, but its start is unknown (no header time): what it left in the tree is kept as it is; restore a checkpoint or undo its work yourself", a.Resume.Label(), last.Seq, last.Role))
			return
		}
		open = append(open, last)
		if since.IsZero() || t.Before(since) {
			since = t
		}
	}
	if len(open) == 0 {
		return
	}
	if in.NoShadow {
		a.warn(fmt.Sprintf("nothing restores the tree at %s and seq %d (%s) started and never completed, but there is no shadow repository to keep the tree in before undoing what it left: the tree is kept as it is; take a checkpoint (replay checkpoint create --reason before-resume) and run replay again to have it undone", a.Resume.Label(), open[0].Seq, open[0].Role))
		return
	}
	end := in.Now
	if end.IsZero() {
		end = time.Now()
	}
	tol := time.Duration(a.Profile.CommitWindowToleranceS) * time.Second
	commits, err := in.Log.Between(since.Add(-tol), end)
	if err != nil {
		a.warn("cannot read the project history for partial commits: " + err.Error())
		return
	}
	kept := map[int]int{} // a kept dispatch's seq -> its item's index
	for i, it := range a.keptItems() {
		for _, d := range it.Attempts {
			kept[d.Seq] = i
		}
	}
	owner := v.attributed().Owner
	var partial []PartialCommit
	var undone []Check // the kept items the undo takes back, named
	unkeep := map[int]bool{}
	for _, c := range commits {
		var by *pipeline.Dispatch
		for _, d := range open {
			if !c.Time.Before(d.PlaceTime().Add(-tol)) && v.partOf(c, d) {
				by = d
				break
			}
		}
		if by != nil {
			if o, theirs := a.othersCommit(in, v, c, by, end); theirs {
				a.addOthersWork(c, o)
				a.warnKept(open[0], c, "another session's work")
				return
			}
			partial = append(partial, PartialCommit{Commit: c, Dispatch: by})
			continue
		}
		if s, ok := owner[c.Hash]; ok {
			if i, isKept := kept[s]; isKept {
				for _, d := range a.keptItems()[i].Attempts {
					unkeep[d.Seq] = true
				}
				if d := a.find(s); d != nil {
					undone = append(undone, Check{Seq: d.Seq, Role: d.Role, Check: "kept across the undo",
						Detail: fmt.Sprintf("its commit %s %q was made after seq %d (%s), which never completed, started in the same tree: the undo of that attempt's work takes it back (it may hold some of it), so the item is re-executed",
							short(c.Hash), c.Subject(), open[0].Seq, open[0].Role)})
				}
				continue
			}
		}
		a.warnKept(open[0], c, "not the work of an attempt the resume re-executes")
		return
	}
	if len(unkeep) > 0 {
		a.unkept = unkeep
		var warnings []string
		for _, w := range a.Warnings {
			if !strings.HasPrefix(w, keptWarning) {
				warnings = append(warnings, w)
			}
		}
		a.Warnings = warnings
		a.resplit()
	}
	a.Failures = append(a.Failures, undone...)
	a.Undo = &Undo{Attempts: open, Since: since, Above: commits}
	a.Partial = append(a.Partial, partial...)
	var seqs []string
	for _, d := range open {
		seqs = append(seqs, fmt.Sprintf("%d %s", d.Seq, d.Role))
	}
	what := "what they left in the tree"
	if len(commits) > 0 {
		what = fmt.Sprintf("%s made since and what they left in the tree", report.Count(len(commits), "commit"))
	}
	a.warn(fmt.Sprintf("nothing restores the tree at %s, and seq %s started and never completed: the resume restores the project's commit from before they started, undoing %s (after a pre-restore-safety checkpoint of the whole tree and a refs/replay/pre-restore ref, with the undo printed)",
		a.Resume.Label(), strings.Join(seqs, ", seq "), what))
}

// warnKept says why the work an attempt left is kept in the tree.
func (a *Analysis) warnKept(d *pipeline.Dispatch, c pipeline.Commit, why string) {
	a.warn(fmt.Sprintf("nothing restores the tree at %s and seq %d (%s) started and never completed, but commit %s %q made since is %s: the tree is kept as it is, with what the attempt left in it; restore a checkpoint or undo its work yourself",
		a.Resume.Label(), d.Seq, d.Role, short(c.Hash), c.Subject(), why))
}

// keptItems groups Kept into work items (the attempts of one item together).
func (a *Analysis) keptItems() []WorkItem {
	saved := a.Items
	redo := a.Redo
	a.Redo = a.Kept
	a.groupItems()
	items := a.Items
	a.Items, a.Redo = saved, redo
	return items
}

// UndoTarget returns the project commit Undo goes back to: the parent of the
// oldest commit in Above, each commit from HEAD down to it being one of
// Above (first parents); HEAD when Above is empty. An error when the history
// is not that line (a merge, a commit of Above not on it).
func UndoTarget(pl *pipeline.Pipeline, u *Undo) (plumbing.Hash, error) {
	if pl.Project == nil {
		return plumbing.ZeroHash, fmt.Errorf("%s is not a git repository", pl.ProjectDir)
	}
	ref, err := pl.Project.Head()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading the project HEAD: %w", pl.ProjectDir, err)
	}
	above := map[string]bool{}
	for _, c := range u.Above {
		above[c.Hash] = true
	}
	h := ref.Hash()
	for len(above) > 0 {
		if !above[h.String()] {
			return plumbing.ZeroHash, fmt.Errorf("commit %s lies between HEAD and the attempts' commits", short(h.String()))
		}
		delete(above, h.String())
		c, err := pl.Project.CommitObject(h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s: reading commit %s: %w", pl.ProjectDir, short(h.String()), err)
		}
		if len(c.ParentHashes) != 1 {
			return plumbing.ZeroHash, fmt.Errorf("commit %s has %d parents", short(h.String()), len(c.ParentHashes))
		}
		h = c.ParentHashes[0]
	}
	return h, nil
}

// undoAttempts restores the project's commit from before the attempts Undo
// names (checkpoint.Store.RestoreCommit: safety checkpoint, pre-restore ref,
// the undo printed).
func undoAttempts(pl *pipeline.Pipeline, a *Analysis, o RunOptions, session string) (*checkpoint.RestoreReport, error) {
	target, err := UndoTarget(pl, a.Undo)
	if err != nil {
		return nil, fmt.Errorf("undoing the work of the attempts that never completed: %w; nothing was changed (restore a checkpoint, or undo it yourself and run replay again)", err)
	}
	first := a.Undo.Attempts[0]
	reason := fmt.Sprintf("before-seq-%d", first.Seq)
	announce := fmt.Sprintf("Restoring the project directory %s to commit %s, from before seq %d (%s) started, undoing what the attempts that never completed left.\n", pl.ProjectDir, short(target.String()), first.Seq, report.Safe(first.Role))
	return pl.Store.RestoreCommit(target, reason, restoreOptions(pl, o, session, announce))
}
