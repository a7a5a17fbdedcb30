package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/replaytool/replay/templates"
)

// chooseProfile settles the pipeline profile: the --profile file when given, else
// the embedded profile of the skill the marker names, else of the skill the dispatch
// headers name (**Pipeline:**), else build when the run's roles and checkpoints say
// build; a skill with no profile, or a run that names none and does not look like
// build, gets a generic profile derived from its own files. Then every dispatch is
// classified by the chosen profile.
func (pl *Pipeline) chooseProfile(explicit *templates.Profile, file string) {
	if explicit != nil {
		pl.Profile, pl.ProfileReason = explicit, fmt.Sprintf("loaded from --profile %s", file)
	} else {
		pl.Profile, pl.ProfileReason = pl.profileFromRun()
	}
	pl.placeRunPhases()
	for _, d := range pl.Dispatches {
		d.Class = pl.Profile.ClassOf(d.Role)
	}
}

// placeRunPhases adds to the profile the phases the run records that it does not
// name (upstream's debugging "synthesis" step, a quality gate's rounds), each in
// the manifest's order between its known neighbours, with a note.
func (pl *Pipeline) placeRunPhases() {
	ordered := slices.Clone(pl.Dispatches)
	SortDispatches(ordered)
	seq := make([]string, 0, len(ordered))
	for _, d := range ordered {
		seq = append(seq, d.Phase)
	}
	p, added := pl.Profile.WithRunPhases(seq)
	if len(added) == 0 {
		return
	}
	pl.Profile = p
	for _, id := range added {
		i := p.PhaseIndex(id)
		where := "first"
		if i > 0 {
			where = "after phase " + p.Phases[i-1].ID
		}
		pl.Warn("phase %q is not in the %s profile: placed %s, as the manifest orders it; its dispatches are verified by their roles and never redone for being unnamed", id, p.Skill, where)
	}
}

func (pl *Pipeline) profileFromRun() (*templates.Profile, string) {
	header, n, total := pl.headerSkill()
	if pl.Marker != nil && strings.TrimSpace(pl.Marker.Skill) != "" {
		skill := strings.TrimSpace(pl.Marker.Skill)
		if header != "" && header != skill {
			pl.Warn("the marker names skill %q but %d of %d dispatch headers name %q; the marker's skill decides (pass --profile FILE to override)", skill, n, total, header)
		}
		return pl.embeddedOrGeneric(skill, "the marker's skill")
	}
	if header != "" {
		return pl.embeddedOrGeneric(header, fmt.Sprintf("the dispatch headers' Pipeline field (%d of %d dispatch files)", n, total))
	}
	if why := pl.buildEvidence(); why != "" {
		p, err := templates.Load("build")
		if err == nil {
			return p, "chosen because nothing names the skill and the run looks like build: " + why
		}
	}
	g := pl.generic("")
	pl.Warn("nothing names the pipeline's skill (no marker skill, no **Pipeline:** in a dispatch header) and the run does not look like build: using a generic profile derived from the run; pass --profile FILE to describe it")
	pl.warnGuessedRoles(g)
	return g, "nothing names the skill and the run does not look like build"
}

// embeddedOrGeneric returns the embedded profile of skill, named by src, or a
// generic one with a warning when there is none.
func (pl *Pipeline) embeddedOrGeneric(skill, src string) (*templates.Profile, string) {
	if templates.Has(skill) {
		if p, err := templates.Load(skill); err == nil {
			return p, fmt.Sprintf("chosen by %s %q", src, skill)
		}
	}
	g := pl.generic(skill)
	var reasons []string
	for _, b := range g.Boundaries {
		reasons = append(reasons, b.Reasons...)
	}
	pl.Warn("skill %q (named by %s) has no pipeline profile (known: %s): using a generic profile, never build's: phases %s from the manifest, boundaries from the checkpoint reasons present (%s); pass --profile FILE to describe the skill",
		skill, src, strings.Join(templates.Known(), ", "), phaseList(g), noneIfEmpty(reasons))
	pl.warnGuessedRoles(g)
	return g, fmt.Sprintf("%s %q has no profile; derived from the run's phases and checkpoints", src, skill)
}

// headerSkill returns the skill the dispatch headers name, how many name it and how
// many name any. Sub-skills (quality-gate, red-team) write into their parent's
// dispatch dir under their own name, so a skill with an embedded profile wins over
// more numerous ones without; among equals the most named wins.
func (pl *Pipeline) headerSkill() (string, int, int) {
	count := map[string]int{}
	var order []string
	total := 0
	for _, d := range pl.Dispatches {
		s := strings.TrimSpace(d.Pipeline)
		if s == "" {
			continue
		}
		total++
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	best := ""
	for _, s := range order {
		known, bestKnown := templates.Has(s), best != "" && templates.Has(best)
		if best == "" || (known && !bestKnown) || (known == bestKnown && count[s] > count[best]) {
			best = s
		}
	}
	return best, count[best], total
}

// buildEvidence names what makes the run look like a build pipeline (roles only
// build dispatches, build's boundary checkpoints, checkpoints whose source is
// build), or "" when nothing does.
func (pl *Pipeline) buildEvidence() string {
	var ev []string
	for _, d := range pl.Dispatches {
		if slices.Contains([]string{"build-implementer", "build-reviewer", "plan-writer", "acceptance-test-writer"}, d.Role) {
			ev = append(ev, fmt.Sprintf("role %s (seq %d)", d.Role, d.Seq))
			break
		}
	}
	for _, c := range pl.Checkpoints {
		if c.Source == "build" || c.Reason == "pre-design-gate" || c.Reason == "pre-plan-gate" {
			ev = append(ev, fmt.Sprintf("checkpoint %s from %s", c.Reason, noneIfEmpty([]string{c.Source})))
			break
		}
		if _, ok := templates.WaveOf("pre-wave-{N}", c.Reason); ok {
			ev = append(ev, "checkpoint "+c.Reason)
			break
		}
	}
	return strings.Join(ev, ", ")
}

// generic derives a profile from the run: its phase values, its checkpoints placed
// among its dispatches by time, its roles.
func (pl *Pipeline) generic(skill string) *templates.Profile {
	in := templates.GenericInput{Skill: skill}
	for _, d := range pl.Dispatches {
		in.Phases = append(in.Phases, d.Phase)
		if !slices.Contains(in.Roles, d.Role) {
			in.Roles = append(in.Roles, d.Role)
		}
	}
	timed := make([]*Dispatch, 0, len(pl.Dispatches))
	for _, d := range pl.Dispatches {
		if !d.Time.IsZero() && d.Phase != "" {
			timed = append(timed, d)
		}
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].Time.Before(timed[j].Time) })
	cps := append([]CheckpointRef{}, pl.Checkpoints...)
	sort.SliceStable(cps, func(i, j int) bool { return cps[i].Time.Before(cps[j].Time) })
	for _, c := range cps {
		if m, ok := placeMark(c, timed, pl.Dispatches); ok {
			in.Marks = append(in.Marks, m)
		}
	}
	return templates.Generic(in)
}

// warnGuessedRoles names every role a generic profile classified from its name.
func (pl *Pipeline) warnGuessedRoles(p *templates.Profile) {
	var roles []string
	for _, d := range pl.Dispatches {
		if !slices.Contains(roles, d.Role) {
			roles = append(roles, d.Role)
		}
	}
	for _, role := range roles {
		if c := p.ClassOf(role); c != templates.RoleUnknown {
			pl.Warn("generic profile: role %q taken as %s from its name; pass --profile FILE if that is wrong", role, c)
		}
	}
}

// placeMark places checkpoint c in the phase of the first dispatch at or after it;
// it opens that phase when no dispatch of the phase ran before it. A checkpoint after
// every dispatch lies in the last one's phase.
//
// A dispatch whose file is gone has no time, so a checkpoint taken between the
// last timed dispatch before it and the next one may lie before or after such
// a dispatch whose manifest line comes between theirs: the times cannot say
// which phase it opens. When its reason names one of those untimed
// dispatches' phases (pre-<phase>, the way skills name their checkpoints), it
// opens that phase; else it stays with the next timed dispatch. The same holds
// after every timed dispatch, for an untimed one whose line follows theirs.
func placeMark(c CheckpointRef, timed, all []*Dispatch) (templates.GenericMark, bool) {
	if len(timed) == 0 {
		return templates.GenericMark{}, false
	}
	next := timed[len(timed)-1]
	after := false
	for _, d := range timed {
		if !d.Time.Before(c.Time) {
			next, after = d, true
			break
		}
	}
	upper := next
	if !after {
		upper = nil // after every timed dispatch: no timed one bounds it
	}
	if ph, ok := namedUntimedPhase(c, timed, all, upper); ok {
		opens := true
		for _, d := range timed {
			if d.Phase == ph && d.Time.Before(c.Time) {
				opens = false
				break
			}
		}
		return templates.GenericMark{Reason: c.Reason, Phase: ph, Opens: opens}, true
	}
	opens := after
	for _, d := range timed {
		if d.Phase == next.Phase && d.Time.Before(c.Time) {
			opens = false
			break
		}
	}
	return templates.GenericMark{Reason: c.Reason, Phase: next.Phase, Opens: opens}, true
}

// namedUntimedPhase returns the phase of a recorded dispatch with no time
// whose manifest line lies after every timed dispatch before c and before
// next (nil: c is after every timed dispatch), when c's reason is
// pre-<that phase>.
func namedUntimedPhase(c CheckpointRef, timed, all []*Dispatch, next *Dispatch) (string, bool) {
	end := int(^uint(0) >> 1)
	if next != nil {
		if next.Entry == nil || next.Entry.FirstLine <= 0 {
			return "", false
		}
		end = next.Entry.FirstLine
	}
	from := 0
	for _, d := range timed {
		if d.Time.Before(c.Time) && d.Entry != nil {
			from = max(from, d.Entry.FirstLine)
		}
	}
	for _, d := range all {
		if !d.Time.IsZero() || d.Entry == nil || d.Phase == "" || (next != nil && d.Phase == next.Phase) {
			continue
		}
		if l := d.Entry.FirstLine; l > from && l < end && strings.EqualFold(c.Reason, "pre-"+d.Phase) {
			return d.Phase, true
		}
	}
	return "", false
}

func phaseList(p *templates.Profile) string {
	ids := make([]string, len(p.Phases))
	for i, ph := range p.Phases {
		ids[i] = ph.ID
	}
	return strings.Join(ids, ", ")
}

func noneIfEmpty(list []string) string {
	var kept []string
	for _, s := range list {
		if s != "" {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return "none"
	}
	return strings.Join(kept, ", ")
}
