package fork

import (
	"reflect"
	"sort"
	"time"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// Run is one side of a comparison: a run's session and its entries by seq.
type Run struct {
	Session string
	Entries map[int]manifest.Entry
}

// Open returns the run session of the tree of runs of pl ("" is the original run)
// with its entries.
func Open(pl *pipeline.Pipeline, session string) (*Run, error) {
	l, err := Chain(pl, session)
	if err != nil {
		return nil, err
	}
	es, err := l.Entries()
	if err != nil {
		return nil, err
	}
	return &Run{Session: l.Session(), Entries: es}, nil
}

// CompareRuns compares run b with run a, two runs of the tree of runs of pl, with
// the A/B comparison: b's entries that differ from a's at the same seq (or that a
// does not have) are b's re-executions of a's dispatches, matched to them by seq and
// so aligned by role, phase and task; the first divergence and the dispatches of a
// that follow from it come out of that comparison.
func CompareRuns(pl *pipeline.Pipeline, a, b *Run, now time.Time) (*ab.Comparison, error) {
	if a.Session == b.Session {
		return nil, errkind.Errorf(ErrBadFork, "diff: both sides are run %s; give two different runs of the lineage", a.Session)
	}
	var in []manifest.Entry
	last := 0
	for _, seq := range sortedSeqs(a.Entries) {
		e := a.Entries[seq]
		e.Seq, e.ReplaySession, e.ReplayOf, e.Mutation, e.Extra = seq, nil, nil, nil, nil
		in = append(in, e)
		last = max(last, seq)
	}
	for seq := range b.Entries {
		last = max(last, seq)
	}
	var labels []string
	next := last + 1
	for _, seq := range sortedSeqs(b.Entries) {
		e := b.Entries[seq]
		if o, ok := a.Entries[seq]; ok && sameOutcome(o, e) {
			continue
		}
		if e.Mutation != nil {
			labels = append(labels, *e.Mutation)
		}
		sess := b.Session
		e.ReplayOf, e.ReplaySession = &seq, &sess
		if _, ok := a.Entries[seq]; !ok {
			e.ReplayOf = nil
		}
		e.Seq, e.Extra = next, nil
		next++
		in = append(in, e)
	}
	if len(labels) == 0 {
		labels = []string{"run " + b.Session + " against run " + a.Session}
	}
	c, err := ab.Compare(ab.CompareInput{Profile: pl.Profile, Entries: in, Session: b.Session, Original: a.Session, Times: pl.Times, Mutations: labels, Now: now})
	if err != nil {
		return nil, errkind.Errorf(ErrBadFork, "diff %s %s: %v; the two runs share every dispatch", a.Session, b.Session, err)
	}
	return c, nil
}

// sameOutcome reports whether two entries of one seq are the same dispatch with
// the same outcome.
func sameOutcome(a, b manifest.Entry) bool {
	return a.Role == b.Role && a.Status == b.Status && reflect.DeepEqual(a.Summary, b.Summary) &&
		reflect.DeepEqual(a.Phase, b.Phase) && reflect.DeepEqual(a.Task, b.Task)
}

// sortedSeqs returns the seqs of a run's entries in order.
func sortedSeqs(m map[int]manifest.Entry) []int {
	out := make([]int, 0, len(m))
	for seq := range m {
		out = append(out, seq)
	}
	sort.Ints(out)
	return out
}
