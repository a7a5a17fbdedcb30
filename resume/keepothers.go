package resume

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// othersKept returns the commits of another session's work (OthersWork) that
// the restore of a.Checkpoint keeps, oldest first, or refuses the restore.
//
// The rule: another run's commits made after the checkpoint are that run's
// work, which this resume must not undo, and this run's commits since the
// checkpoint are what the restore must undo. When no commit of this run since
// the checkpoint changed a path that another run's commit changed, the two
// are separable: the restore goes back to the checkpoint and applies the other
// run's commits again on top of it (checkpoint.Store.RestoreKeeping), so its
// work stays exactly as it was, whether that run is still in flight or has
// finished. When they changed the same files the restore cannot tell whose
// lines are whose: it refuses, changing nothing, and says how to go on. A
// branch whose history since the checkpoint is not a line of single-parent
// commits (a merge) is refused the same way.
func othersKept(pl *pipeline.Pipeline, a *Analysis) ([]plumbing.Hash, error) {
	if len(a.OthersWork) == 0 || pl.Project == nil || pl.Store == nil {
		return nil, nil
	}
	cp, err := pl.Store.Find(a.Checkpoint.Hash)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", a.Checkpoint.Short, err)
	}
	base, err := pl.Store.ProjectHeadAt(*cp)
	if err != nil {
		return nil, err
	}
	chain, err := commitsSince(pl, base)
	if err != nil {
		return nil, refuseOthers(pl, a, err.Error())
	}
	others := map[string]bool{}
	for _, w := range a.OthersWork {
		others[w.Commit.Hash] = true
	}
	var keep []plumbing.Hash
	theirs, ours := map[string][]string{}, map[string][]string{}
	for _, c := range chain {
		parent, err := c.Parent(0)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the parent of commit %s: %w", pl.ProjectDir, short(c.Hash.String()), err)
		}
		paths := changedPaths(parent, c)
		owner := ours
		if others[c.Hash.String()] {
			owner = theirs
			keep = append(keep, c.Hash)
		}
		for _, p := range paths {
			owner[p] = append(owner[p], short(c.Hash.String()))
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	var both []string
	for p, hs := range theirs {
		if mine, ok := ours[p]; ok {
			both = append(both, fmt.Sprintf("%s (theirs %s, this run's %s)", p, strings.Join(hs, ","), strings.Join(mine, ",")))
		}
	}
	if len(both) > 0 {
		sort.Strings(both)
		return nil, refuseOthers(pl, a, "this run's commits since the checkpoint changed the same files: "+strings.Join(both, "; "))
	}
	return keep, nil
}

// commitsSince returns the project commits from base (excluded) to HEAD
// along first parents, oldest first; an error says why they are not a line of
// single-parent commits on top of base.
func commitsSince(pl *pipeline.Pipeline, base plumbing.Hash) ([]*object.Commit, error) {
	if base.IsZero() {
		return nil, fmt.Errorf("the checkpoint names no project commit")
	}
	ref, err := pl.Project.Head()
	if err != nil {
		return nil, fmt.Errorf("the project HEAD cannot be read: %v", err)
	}
	var chain []*object.Commit
	for h := ref.Hash(); h != base; {
		c, err := pl.Project.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("commit %s cannot be read: %v", short(h.String()), err)
		}
		if len(c.ParentHashes) == 0 {
			return nil, fmt.Errorf("the checkpoint's commit %s is not on the branch", short(base.String()))
		}
		if len(c.ParentHashes) != 1 {
			return nil, fmt.Errorf("the branch reaches the checkpoint's commit %s only through commit %s with %d parents", short(base.String()), short(h.String()), len(c.ParentHashes))
		}
		chain = append(chain, c)
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// refuseOthers is the refusal of a restore that cannot keep another run's
// work: it names the commits, why, and what the user can do.
func refuseOthers(pl *pipeline.Pipeline, a *Analysis, why string) error {
	var parts []string
	for _, w := range a.OthersWork {
		parts = append(parts, fmt.Sprintf("%s %q (seq %d %s of session %s)", short(w.Commit.Hash), w.Commit.Subject(), w.Dispatch.Seq, w.Dispatch.Role, w.Dispatch.Session))
	}
	return errkind.Errorf(checkpoint.ErrRefused, "restoring checkpoint %s would undo %s, another run's work on this project, and it cannot be kept apart from this run's work since the checkpoint (%s); nothing was changed. To resume anyway, restore the checkpoint yourself (replay checkpoint restore %s --yes --repo %s --shadow %s: it keeps the branch as it was under refs/replay/pre-restore/, to apply the other run's commits again by hand) and run replay again",
		a.Checkpoint.Short, report.Safe(strings.Join(parts, "; ")), report.Safe(why), a.Checkpoint.Short, report.Safe(pl.ProjectDir), report.Safe(pl.ShadowDir))
}

// othersInFlightAt reports whether the restore of a checkpoint taken at t
// leaves the checkpoint's uncommitted files as they are now: another session
// of the project shares the scratch dir. A checkpoint is taken at this run's
// boundary, where none of its own dispatches is in flight; what it holds
// uncommitted is a user's edit or another session's attempt in flight then,
// whose partial file is that session's: written back, it resurrected an
// attempt that session has since committed or undone by its own resume, and
// that session, complete, never removed it (crash simulator seeds 23, 30,
// 130, 1055, 1104; seed 869: that attempt's dispatch file is gone, so no
// window of it holds t, hence any other session, not only one in flight at
// t). Left as it is now, a user's edit is not lost either.
func othersInFlightAt(pl *pipeline.Pipeline, t time.Time) bool {
	if t.IsZero() {
		return false
	}
	others := pl.OtherSessions()
	for _, o := range others {
		if o.Window(t, t) {
			return true
		}
	}
	return len(others) > 0
}

// announceKeeping says, before the restore's preview and question, which
// commits of another run the restore keeps: they come back on top of the
// checkpoint, and the preview lists them apart from the commits the branch
// leaves behind.
func announceKeeping(w io.Writer, a *Analysis, keep []plumbing.Hash) {
	if len(keep) == 0 || w == nil {
		return
	}
	fmt.Fprintf(w, "The restore keeps %s of another run made after checkpoint %s, applying them again on top of it (same message, author and times):\n", report.Count(len(keep), "commit"), a.Checkpoint.Short)
	for _, h := range keep {
		for _, o := range a.OthersWork {
			if o.Commit.Hash == h.String() {
				fmt.Fprintf(w, "  %s %q (seq %d %s of session %s)\n", short(o.Commit.Hash), report.Safe(o.Commit.Subject()), o.Dispatch.Seq, report.Safe(o.Dispatch.Role), report.Safe(o.Dispatch.Session))
			}
		}
	}
}

// logKept says which commits of another run a restore applied again.
func logKept(w io.Writer, rep *checkpoint.RestoreReport, kept []checkpoint.KeptCommit) {
	if rep == nil || len(kept) == 0 || w == nil {
		return
	}
	for _, k := range kept {
		fmt.Fprintf(w, "Kept another run's commit %s %q: applied again on top of checkpoint %s as %s.\n",
			short(k.Old.String()), report.Safe(k.Subject), rep.Checkpoint.Short, short(k.New.String()))
	}
}
