package fork

import (
	"encoding/json"
	"path/filepath"
	"sort"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resume"
)

// ReplayModeFork is the replay_mode value of the entries a fork's continuation writes.
const ReplayModeFork = `"fork"`

// RedispatchFunc runs the work of an analysis through an agent, recordings in store
// first, with the options given (the caller owns signals and progress display).
type RedispatchFunc func(a *resume.Analysis, store *agent.Store, o redispatch.Options) (*redispatch.Report, error)

// Continue runs the fork session's dispatches from its fork seq on, in its
// worktree, through run: the original run's dispatches it has no entry of yet (a
// substituted seq keeps its substituted answer), in order. The entries and
// dispatch files go to the fork's own manifest and directory; recordings are looked
// up in the fork's store first (its substituted responses), then its ancestor forks'
// and the original run's.
// Nothing of a parent is written.
func Continue(pl *pipeline.Pipeline, session string, run RedispatchFunc) (*redispatch.Report, error) {
	l, err := Chain(pl, session)
	if err != nil {
		return nil, err
	}
	rec := l.Record()
	if rec == nil {
		return nil, errkind.Errorf(ErrBadFork, "run %s is the original run; continue a fork", session)
	}
	if rec.Worktree == "" {
		return nil, errkind.Errorf(ErrBadFork, "fork %s has no working tree (no checkpoint had been taken by seq %d): its dispatches cannot run; fork at a later seq", session, rec.ForkSeq)
	}
	have, err := l.Entries()
	if err != nil {
		return nil, err
	}
	var work []*pipeline.Dispatch
	for _, d := range pl.Dispatches {
		if d.ReplaySession != "" || d.Seq < rec.ForkSeq {
			continue
		}
		if e, ok := have[d.Seq]; ok && e.ReplaySession != nil && *e.ReplaySession == session {
			continue
		}
		work = append(work, d)
	}
	sort.SliceStable(work, func(i, j int) bool { return work[i].Seq < work[j].Seq })
	if len(work) == 0 {
		return &redispatch.Report{}, nil
	}
	dir := l.Dir()
	a := &resume.Analysis{Pipeline: pl, Profile: pl.Profile, Dispatches: pl.Dispatches, Redo: work}
	// Recordings: the fork's own (its substituted answers), its ancestors', the original run's.
	store := forkStore(pl, dir)
	for _, r := range l.records[1:] {
		store.Also(forkDir(pl, r.Session))
	}
	store.Also(pl.DispatchDir)
	return run(a, store, redispatch.Options{
		Session: session, WorkDir: filepath.Join(dir, rec.Worktree),
		ManifestPath: filepath.Join(dir, ManifestFile), DispatchDir: dir,
		Extra: map[string]json.RawMessage{pipeline.ReplayModeKey: json.RawMessage(ReplayModeFork)},
	})
}
