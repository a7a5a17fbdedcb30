package resume

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// Boundary is a point of the pipeline a resume can start from: the start of a phase,
// or a point inside a phase (a wave, a gate) placed by its checkpoint's time.
type Boundary struct {
	Index int
	Name  string
	Phase string
	// Wave is the wave this boundary opens (1 for the start of a phase split into
	// waves), 0 when the phase has no waves.
	Wave int
	// Start marks the first boundary: the start of the pipeline, before every
	// dispatch (nothing to restore).
	Start bool
	// Reasons are the checkpoint reasons that mark this boundary; empty for the
	// start of the pipeline, and for a phase start the profile knows no checkpoint
	// of (a derived profile's phase that no checkpoint opened).
	Reasons []string
	Mid     bool
	// Time places a mid boundary: the earliest checkpoint of its reason, or, when
	// that checkpoint is missing, the first dispatch after the boundary.
	Time time.Time
	// Inferred marks a mid boundary placed by the dispatches because its checkpoint
	// is missing (evicted, never taken): the resume falls back from it, with a warning.
	Inferred bool
	// End marks the last boundary: after every recorded dispatch. A run whose work
	// is all complete and verified resumes there: nothing to restore or redo.
	End bool

	// phaseIdx is phaseOf.PhaseIndex(Phase), kept by phaseIndex: segmentOf asks it
	// of every boundary for every dispatch.
	phaseOf  *templates.Profile
	phaseIdx int
}

// phaseIndex returns p.PhaseIndex(b.Phase), computed once per profile.
func (b *Boundary) phaseIndex(p *templates.Profile) int {
	if b.phaseOf != p {
		b.phaseOf, b.phaseIdx = p, p.PhaseIndex(b.Phase)
	}
	return b.phaseIdx
}

// Label is the boundary as --explain prints it: "Mid-Phase 3 (wave 2): pre-wave-2".
func (b *Boundary) Label() string {
	if b.End {
		return "end of the recorded work"
	}
	if b.Start {
		return "start of the pipeline"
	}
	if len(b.Reasons) == 0 {
		return b.Name + " (no checkpoint reason)"
	}
	return fmt.Sprintf("%s: %s", b.Name, strings.Join(b.Reasons, " or "))
}

// placeBoundaries lists the boundaries of the pipeline in order: the pipeline start,
// each phase start, and the mid-phase boundaries (waves, gates) placed by the time of
// their checkpoints, or by the dispatches when a checkpoint is missing.
func placeBoundaries(p *templates.Profile, cps []pipeline.CheckpointRef, ds []*pipeline.Dispatch) []*Boundary {
	bs := []*Boundary{{Name: "Start of the pipeline", Phase: p.Phases[0].ID, Start: true}}
	for _, spec := range p.Boundaries {
		ph := p.Phases[p.PhaseIndex(spec.Phase)]
		switch {
		case !spec.Mid:
			b := &Boundary{Name: spec.Name, Phase: spec.Phase, Reasons: spec.Reasons}
			if ph.Waves != "" {
				b.Wave = 1
			}
			bs = append(bs, b)
		case spec.Wave:
			bs = append(bs, waveBoundaries(spec, ph.Waves, cps, ds)...)
		default:
			if t, ok := earliest(cps, spec.Reasons); ok {
				bs = append(bs, &Boundary{Name: spec.Name, Phase: spec.Phase, Reasons: spec.Reasons, Mid: true, Time: t})
			} else if t, ok := openedAt(spec, ds); ok {
				bs = append(bs, &Boundary{Name: spec.Name, Phase: spec.Phase, Reasons: spec.Reasons, Mid: true, Time: t, Inferred: true})
			}
		}
	}
	sort.SliceStable(bs, func(i, j int) bool {
		a, b := bs[i], bs[j]
		pa, pb := p.PhaseIndex(a.Phase), p.PhaseIndex(b.Phase)
		if a.Start {
			pa = -1
		}
		if b.Start {
			pb = -1
		}
		if pa != pb {
			return pa < pb
		}
		if a.Mid != b.Mid {
			return !a.Mid
		}
		return a.Time.Before(b.Time)
	})
	bs = append(bs, &Boundary{Name: "End of the recorded work", Phase: p.Phases[len(p.Phases)-1].ID, End: true})
	for i, b := range bs {
		b.Index = i
	}
	return bs
}

// waveBoundaries makes one boundary per wave N ≥ 2: placed by its checkpoint, or,
// when that is missing, by the first dispatch of the wave as the dispatches show it.
func waveBoundaries(spec templates.BoundarySpec, pattern string, cps []pipeline.CheckpointRef, ds []*pipeline.Dispatch) []*Boundary {
	first := map[int]time.Time{}
	for _, cp := range cps {
		n, ok := templates.WaveOf(pattern, cp.Reason)
		if !ok || n < 2 {
			continue
		}
		if t, seen := first[n]; !seen || cp.Time.Before(t) {
			first[n] = cp.Time
		}
	}
	var out []*Boundary
	add := func(n int, t time.Time, inferred bool) {
		out = append(out, &Boundary{
			Name:     strings.ReplaceAll(spec.Name, "{N}", fmt.Sprint(n)),
			Phase:    spec.Phase,
			Wave:     n,
			Reasons:  []string{templates.WaveReason(pattern, n)},
			Mid:      true,
			Time:     t,
			Inferred: inferred,
		})
	}
	for n, t := range first {
		add(n, t, false)
	}
	starts := waveStarts(spec.Phase, ds)
	for i := 1; i < len(starts); i++ {
		n, t := i+1, starts[i]
		if _, ok := first[n]; ok {
			continue
		}
		// Only where it fits between the waves whose checkpoints exist.
		if prev, ok := first[n-1]; ok && !t.After(prev) {
			continue
		}
		if next, ok := first[n+1]; ok && !t.Before(next) {
			continue
		}
		add(n, t, true)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Wave < out[j].Wave })
	return out
}

// waveStarts returns the header time of the first dispatch of each wave of phase, as
// the dispatches show it: a wave opens with dispatches for tasks not seen before,
// and the next one opens when a dispatch for a new task comes after the current
// wave's tasks moved on to other roles (cleanup, review, tests). A phase whose
// dispatches have no tasks (debugging's fix cycles, siege's fix rounds) goes in
// rounds instead: roundStarts.
func waveStarts(phase string, ds []*pipeline.Dispatch) []time.Time {
	var tasked, taskless []*pipeline.Dispatch
	for _, d := range ds {
		if d.Phase != phase || d.ReplayOf != 0 {
			continue
		}
		switch {
		case d.Task != nil && !d.PlaceTime().IsZero():
			// an untimed dispatch (its file gone) still shows its task at
			// its place in the manifest (placeUntimed)
			tasked = append(tasked, d)
		case d.Time.IsZero():
		case d.Task == nil:
			taskless = append(taskless, d)
		}
	}
	if len(tasked) == 0 {
		return roundStarts(taskless)
	}
	sort.SliceStable(tasked, func(i, j int) bool { return tasked[i].PlaceTime().Before(tasked[j].PlaceTime()) })
	var starts []time.Time
	seen := map[int]bool{}
	opener, moved := "", false
	for _, d := range tasked {
		switch {
		case d.Time.IsZero():
			// its place is only a lower bound of its time: it opens no wave
		case !seen[*d.Task] && (len(starts) == 0 || moved):
			starts = append(starts, d.Time)
			opener, moved = d.Role, false
		case seen[*d.Task] && d.Role != opener:
			moved = true
		}
		seen[*d.Task] = true
	}
	return starts
}

// roundStarts returns the header time of the first dispatch of each round of a
// phase whose dispatches have no tasks: the first dispatch opens round 1 and its
// role is the round's opener (the fixer); the opener dispatched again after the
// round moved on to another role (the fix's verifier) opens the next round. A
// dispatch of the opener with nothing else in between is the same round (a retry,
// a parallel fixer).
func roundStarts(ds []*pipeline.Dispatch) []time.Time {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Time.Before(ds[j].Time) })
	var starts []time.Time
	opener, moved := "", false
	for _, d := range ds {
		switch {
		case len(starts) == 0 || (moved && d.Role == opener):
			starts = append(starts, d.Time)
			opener, moved = d.Role, false
		case d.Role != opener:
			moved = true
		}
	}
	return starts
}

// openedAt returns the header time of the first dispatch in spec's phase of one of
// the roles that open it; false when the profile names none or none was dispatched.
func openedAt(spec templates.BoundarySpec, ds []*pipeline.Dispatch) (time.Time, bool) {
	var t time.Time
	for _, d := range ds {
		if d.Phase == spec.Phase && !d.Time.IsZero() && slices.Contains(spec.OpenedBy, d.Role) && (t.IsZero() || d.Time.Before(t)) {
			t = d.Time
		}
	}
	return t, !t.IsZero()
}

func earliest(cps []pipeline.CheckpointRef, reasons []string) (time.Time, bool) {
	var t time.Time
	found := false
	for _, cp := range cps {
		for _, r := range reasons {
			if checkpoint.MatchReason(cp.Reason, r) && (!found || cp.Time.Before(t)) {
				t, found = cp.Time, true
			}
		}
	}
	return t, found
}

// newestCheckpoint returns the newest checkpoint matching one of reasons.
func newestCheckpoint(cps []pipeline.CheckpointRef, reasons []string) (*pipeline.CheckpointRef, bool) {
	var best *pipeline.CheckpointRef
	for i := range cps {
		for _, r := range reasons {
			if checkpoint.MatchReason(cps[i].Reason, r) && (best == nil || !cps[i].Time.Before(best.Time)) {
				best = &cps[i]
			}
		}
	}
	return best, best != nil
}

// before reports whether dispatch d lies before boundary b: in an earlier phase, or
// in the same phase before a mid boundary's time. A dispatch whose time is unknown
// is never before a mid boundary (it is re-executed rather than trusted).
func before(p *templates.Profile, d *pipeline.Dispatch, b *Boundary) bool {
	return beforeIn(p, p.PhaseIndex(d.Phase), d, b)
}

// beforeIn is before with d's phase index pd already looked up.
func beforeIn(p *templates.Profile, pd int, d *pipeline.Dispatch, b *Boundary) bool {
	if b.End {
		return true
	}
	if b.Start {
		return false
	}
	pb := b.phaseIndex(p)
	if pd != pb {
		return pd >= 0 && pd < pb
	}
	t := d.PlaceTime()
	if !b.Mid || t.IsZero() {
		return false
	}
	return t.Before(b.Time)
}

// segmentOf returns the index of the latest boundary at or before d.
func segmentOf(p *templates.Profile, d *pipeline.Dispatch, bs []*Boundary) int {
	// The last boundary of bs that d is not before, found from the end: a dispatch
	// late in a long pipeline is placed after a few checks, not one per boundary.
	pd := p.PhaseIndex(d.Phase)
	for i := len(bs) - 1; i >= 0; i-- {
		if !beforeIn(p, pd, d, bs[i]) {
			return bs[i].Index
		}
	}
	return 0
}

// boundaryMarks returns the times of the checkpoints that mark a boundary (not
// task-level ones such as pre-cleanup-task-N), ascending.
func boundaryMarks(p *templates.Profile, cps []pipeline.CheckpointRef) []time.Time {
	var out []time.Time
	for _, cp := range cps {
		if isBoundaryReason(p, cp.Reason) {
			out = append(out, cp.Time)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

func isBoundaryReason(p *templates.Profile, reason string) bool {
	for _, spec := range p.Boundaries {
		for _, r := range spec.Reasons {
			if strings.Contains(r, "{N}") {
				if _, ok := templates.WaveOf(r, reason); ok {
					return true
				}
			} else if checkpoint.MatchReason(reason, r) {
				return true
			}
		}
	}
	return false
}
