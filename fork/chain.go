package fork

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// Lineage is one run of a pipeline's tree of runs: the original run, or a fork
// with the records of its ancestors up to the original.
type Lineage struct {
	root *pipeline.Pipeline
	// records holds the run's own record first, then its parent's, up to the
	// fork of the original run; empty for the original run.
	records []*Record
}

// Chain finds the run named session in the tree of runs of the original run pl:
// "" or pl's own session is the original run, anything else a fork under pl's
// scratch dir. An unknown session is an ErrBadFork error naming the known runs.
func Chain(pl *pipeline.Pipeline, session string) (*Lineage, error) {
	l := &Lineage{root: pl}
	if session == "" || session == pl.Location.SessionID {
		return l, nil
	}
	recs, _ := ListRecords(pl.ScratchDir)
	byID := map[string]*Record{}
	for _, r := range recs {
		byID[r.Session] = r
	}
	for cur := session; cur != pl.Location.SessionID; {
		r, ok := byID[cur]
		if !ok || len(l.records) > len(recs) || r.Root != pl.Location.SessionID {
			return nil, errkind.Errorf(ErrBadFork, "run %q: not a run of session %s; known runs: %s", session, pl.Location.SessionID, strings.Join(knownRuns(pl, recs), ", "))
		}
		l.records = append(l.records, r)
		cur = r.Parent
	}
	return l, nil
}

// knownRuns names the original run and its forks.
func knownRuns(pl *pipeline.Pipeline, recs []*Record) []string {
	out := []string{pl.Location.SessionID + " (original)"}
	for _, r := range recs {
		if r.Root == pl.Location.SessionID {
			out = append(out, r.Session)
		}
	}
	return out
}

// Session is the run's session id.
func (l *Lineage) Session() string {
	if len(l.records) == 0 {
		return l.root.Location.SessionID
	}
	return l.records[0].Session
}

// Record is the run's lineage record; nil for the original run.
func (l *Lineage) Record() *Record {
	if len(l.records) == 0 {
		return nil
	}
	return l.records[0]
}

// Dir is the fork's directory; "" for the original run.
func (l *Lineage) Dir() string {
	if len(l.records) == 0 {
		return ""
	}
	return forkDir(l.root, l.records[0].Session)
}

func forkDir(pl *pipeline.Pipeline, session string) string {
	return filepath.Join(pl.ScratchDir, ForksDir, session)
}

// FirstForkSeq is the lowest fork seq of the run's lineage: below it the run is
// the original run (MaxInt for the original run itself).
func (l *Lineage) FirstForkSeq() int { return l.firstForkSeq() }

// firstForkSeq is the lowest fork seq of the run's lineage: below it the run is
// the original run (MaxInt for the original run itself).
func (l *Lineage) firstForkSeq() int {
	first := math.MaxInt
	for _, r := range l.records {
		first = min(first, r.ForkSeq)
	}
	return first
}

// Entries returns the run's entries by seq: the original run's entries (its A/B
// and resume replays left out), and down the lineage each fork's parent's entries
// below its fork seq followed by the fork's own. Nothing is copied on disk: this
// is how a fork references its parent.
func (l *Lineage) Entries() (map[int]manifest.Entry, error) {
	out := map[int]manifest.Entry{}
	for _, e := range l.root.Manifest.Entries {
		if e.ReplaySession == nil {
			out[e.Seq] = e
		}
	}
	for i := len(l.records) - 1; i >= 0; i-- {
		r := l.records[i]
		for seq := range out {
			if seq >= r.ForkSeq {
				delete(out, seq)
			}
		}
		own, err := ownEntries(forkDir(l.root, r.Session))
		if err != nil {
			return nil, err
		}
		for _, e := range own {
			// A fork's entry stands for the seq it re-executed or answered.
			seq := e.Seq
			if e.ReplayOf != nil {
				seq = *e.ReplayOf
			}
			out[seq] = e
		}
	}
	return out, nil
}

// ownEntries reads the entries a fork made itself; an empty manifest is none.
func ownEntries(dir string) ([]manifest.Entry, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	m, err := manifest.Parse(strings.NewReader(string(data)), path)
	if err != nil {
		return nil, fmt.Errorf("fork manifest %s: %w", path, err)
	}
	return m.Entries, nil
}

// readSmall reads a fork's own manifest, bounded like any manifest of a run.
func readSmall(path string) ([]byte, error) {
	return runfile.ReadFile(path, runfile.Manifest)
}
