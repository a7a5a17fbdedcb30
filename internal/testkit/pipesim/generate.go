package pipesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// zones are the project machine's possible zones, odd offsets included.
var zones = []int{-10 * 60, -7 * 60, -3*60 - 30, 0, 60, 2 * 60, 5*60 + 30, 5*60 + 45, 9 * 60, 12*60 + 45, 14 * 60}

// durable says how the scratch copy of the dispatch dir relates to the live one.
type durable int

const (
	liveOnly    durable = iota // no copy in the scratch dir
	staleCopy                  // a copy taken earlier; the live dir moved on
	fullCopy                   // a copy of everything, live dir kept
	copyNoLive                 // a copy of everything; /tmp was lost
	numDurables                // count
)

// layout is where one generated run lives.
type layout struct {
	project, home, tmp, h, scratch, shadow string
}

// Generate writes the crashed run of seed under root (root/project, root/home,
// root/tmp) and returns its truth.
func Generate(seed int64, root string) (*Truth, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	zone := time.FixedZone("", pick(r, zones)*60)
	L := layout{project: filepath.Join(root, "project"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	sum := sha256.Sum256([]byte(L.project))
	L.h = hex.EncodeToString(sum[:])[:16]
	L.scratch = filepath.Join(L.home, ".claude", "projects", L.h, "memory")
	L.shadow = filepath.Join(L.home, ".claude", "projects", L.h, "checkpoints", L.h)
	// the project and the shadow dir come with their git directories
	for _, d := range []string{L.tmp, L.scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}

	start := time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(28), 7+r.IntN(12), r.IntN(60), r.IntN(60), 0, zone)
	u := newRun(r, pickScript(r), start, L)
	branch := pick(r, []string{"feat/billing", "fix/refund-currency", "chore/hardening", "feat/exports"})
	w, err := newWriter(L, branch, start.Add(-8*24*time.Hour))
	if err != nil {
		return nil, err
	}
	t := &Truth{Seed: seed, Skill: u.sc.Skill, Session: u.sid, Branch: branch, Project: L.project, Home: L.home, Tmp: L.tmp, Foreign: map[string]time.Time{}}

	// An older run of another skill, on another branch, in the same shadow
	// repository (and, sometimes, its durable copy in the scratch dir).
	if r.IntN(3) > 0 {
		old := newRun(r, pickScript(r), start.Add(-time.Duration(2+r.IntN(8))*24*time.Hour), L)
		old.simulate()
		oldBranch := "feat/earlier-" + old.sc.Skill
		if err := w.apply(old, oldBranch, len(old.events), false, -1); err != nil {
			return nil, err
		}
		for _, s := range old.slots {
			if s.done && !s.Skipped {
				t.Foreign[s.Hash] = s.At
			}
		}
		if r.IntN(2) == 0 {
			if err := writeDir(filepath.Join(L.scratch, "crucible-dispatch-"+old.sid), w.dirs[old]); err != nil {
				return nil, err
			}
		}
		u.shapes["older-run"] = true
	}

	u.simulate()
	n := len(u.events)
	crash := n/5 + r.IntN(n-n/5)
	if crash >= n {
		crash = n - 1
	}
	mode := durable(r.IntN(int(numDurables)))
	staleAt := -1
	if mode == staleCopy {
		staleAt = r.IntN(crash + 1)
		u.shapes["stale-durable-copy"] = true
	}
	if err := w.apply(u, branch, crash, r.IntN(2) == 0, staleAt); err != nil {
		return nil, err
	}
	if err := w.finish(branch); err != nil {
		return nil, err
	}
	live := w.dirs[u]
	switch mode {
	case liveOnly, staleCopy, fullCopy:
		if err := writeDir(u.dd, live); err != nil {
			return nil, err
		}
	}
	switch mode {
	case staleCopy:
		if err := writeDir(filepath.Join(L.scratch, filepath.Base(u.dd)), w.stale); err != nil {
			return nil, err
		}
	case fullCopy, copyNoLive:
		if err := writeDir(filepath.Join(L.scratch, filepath.Base(u.dd)), live); err != nil {
			return nil, err
		}
	}
	if mode == copyNoLive {
		u.shapes["live-dir-gone"] = true
	}
	if err := u.writeMarkers(L, branch, w.baseline); err != nil {
		return nil, err
	}
	if err := w.writeCheckpointTable(r); err != nil {
		return nil, err
	}
	if err := w.project.flush(); err != nil {
		return nil, err
	}
	if err := w.shadow.flush(); err != nil {
		return nil, err
	}
	// the fragments the crash left behind
	var frags []int
	for _, e := range u.events[:crash] {
		if e.kind == evFragment {
			frags = append(frags, e.seq)
		}
	}
	u.fragSeqs = frags
	u.computeTruth(t)
	t.Now = u.crashAt.Add(time.Hour).UTC().Truncate(time.Second)
	for s := range u.shapes {
		t.Shapes = append(t.Shapes, s)
	}
	sort.Strings(t.Shapes)
	return t, nil
}

func newRun(r *rand.Rand, sc script, start time.Time, L layout) *run {
	sid := fmt.Sprint(start.Unix())
	return &run{r: r, sc: sc, sid: sid, start: start, dd: filepath.Join(L.tmp, "crucible-dispatch-"+sid),
		newFields: r.IntN(2) == 0, hdrUTC: r.IntN(3) == 0, shapes: map[string]bool{}, insts: map[Item]int{}}
}

// writeDir writes a dispatch dir's files.
func writeDir(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeMarkers writes .pipeline-active (8-key JSON, 6-key JSON or the oldest
// 4-line text) and the .dispatch-active-<sid> compaction marker.
func (u *run) writeMarkers(L layout, branch string, baseline plumbing.Hash) error {
	phase := ""
	for _, a := range u.attempts {
		if a.fileDone {
			phase = a.Phase
		}
	}
	started := u.start.Format("2006-01-02T15:04:05-07:00")
	var text string
	switch n := u.r.IntN(10); {
	case n < 8:
		text = fmt.Sprintf(`{"pipeline_id": "%s", "skill": "%s", "phase": "%s", "start_time": "%s", "scratch_dir": "%s", "dispatch_dir": "%s/", "branch": "%s", "baseline_sha": "%s"}`+"\n",
			u.sid, u.sc.Skill, phase, started, L.scratch, u.dd, branch, baseline)
	case n < 9:
		text = fmt.Sprintf(`{"pipeline_id": "%s", "skill": "%s", "phase": "%s", "start_time": "%s", "scratch_dir": "%s", "dispatch_dir": "%s/"}`+"\n",
			u.sid, u.sc.Skill, phase, started, L.scratch, u.dd)
		u.shapes["marker-6-key"] = true
	default:
		text = fmt.Sprintf("pipeline: %s\nsession-id: %s\nstarted: %s\ndispatch-dir: %s/\n", u.sc.Skill, u.sid, started, u.dd)
		u.shapes["marker-4-line"] = true
	}
	if err := os.WriteFile(filepath.Join(L.scratch, ".pipeline-active"), []byte(text), 0o644); err != nil {
		return err
	}
	last := 0
	for _, a := range u.attempts {
		if a.beforeDone && a.Seq > last {
			last = a.Seq
		}
	}
	return os.WriteFile(filepath.Join(L.scratch, ".dispatch-active-"+u.sid), []byte(fmt.Sprintf("dispatch-dir: %s/\nseq: %d\n", u.dd, last)), 0o644)
}

// localStamp is the orchestrator's local wall clock with no zone, as checkpoint
// subjects and rows carry it.
func localStamp(t time.Time) string { return t.Format("2006-01-02 15:04:05") }
