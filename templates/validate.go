package templates

import (
	"fmt"
	"strings"
	"unicode"
)

// maxTolerance bounds commit_window_tolerance_s: a day of slack would make every
// commit count for every dispatch.
const maxTolerance = 3600

// validate checks a parsed profile for everything the engine relies on.
func (p *Profile) validate() error {
	if strings.TrimSpace(p.Skill) == "" {
		return &ProfileError{Field: "skill", Msg: `is missing or empty; name the skill the profile describes, e.g. "build"`}
	}
	if len(p.Phases) == 0 {
		return &ProfileError{Field: "phases", Msg: `is missing or empty; list the phases in order, e.g. [{"id":"1","name":"Design"}]`}
	}
	seen := map[string]bool{}
	for i, ph := range p.Phases {
		field := fmt.Sprintf("phases[%d]", i)
		if strings.TrimSpace(ph.ID) == "" {
			return &ProfileError{Field: field + ".id", Msg: `is missing or empty; give the phase value the manifest uses, e.g. "3"`}
		}
		if seen[ph.ID] {
			return &ProfileError{Field: field + ".id", Msg: fmt.Sprintf("repeats phase %q; each phase appears once", ph.ID)}
		}
		seen[ph.ID] = true
		if ph.Waves != "" {
			if err := checkReason(field+".waves", ph.Waves, true); err != nil {
				return err
			}
		}
	}
	for i, b := range p.Boundaries {
		if err := p.validateBoundary(fmt.Sprintf("boundaries[%d]", i), b); err != nil {
			return err
		}
	}
	if err := p.validateRoles(); err != nil {
		return err
	}
	if err := p.validateSideEffects(); err != nil {
		return err
	}
	if p.CommitWindowToleranceS < 0 || p.CommitWindowToleranceS > maxTolerance {
		return &ProfileError{Field: "commit_window_tolerance_s", Msg: fmt.Sprintf("is %d; give seconds between 0 and %d", p.CommitWindowToleranceS, maxTolerance)}
	}
	return nil
}

func (p *Profile) validateBoundary(field string, b BoundarySpec) error {
	if strings.TrimSpace(b.Name) == "" {
		return &ProfileError{Field: field + ".name", Msg: `is missing or empty; name the boundary, e.g. "Pre-Phase 3"`}
	}
	i := p.PhaseIndex(b.Phase)
	if i < 0 {
		return &ProfileError{Field: field + ".phase", Msg: fmt.Sprintf("names unknown phase %q; use one of the ids under phases", b.Phase)}
	}
	if len(b.Reasons) == 0 {
		return &ProfileError{Field: field + ".reasons", Msg: `is missing or empty; list the checkpoint reasons that mark this boundary, e.g. ["pre-wave-1"]`}
	}
	for j, r := range b.Reasons {
		if err := checkReason(fmt.Sprintf("%s.reasons[%d]", field, j), r, b.Wave); err != nil {
			return err
		}
	}
	if b.Wave {
		if !b.Mid {
			return &ProfileError{Field: field + ".mid", Msg: "must be true on a wave boundary (wave: true); a wave lies inside its phase"}
		}
		if p.Phases[i].Waves == "" {
			return &ProfileError{Field: field + ".wave", Msg: fmt.Sprintf("is true but phase %q has no waves pattern; set phases[%d].waves", b.Phase, i)}
		}
	}
	return nil
}

// checkReason checks one checkpoint reason: a single token, with exactly one {N}
// when it is a pattern and none otherwise.
func checkReason(field, r string, pattern bool) error {
	if r == "" || strings.TrimSpace(r) != r || strings.IndexFunc(r, func(c rune) bool { return unicode.IsSpace(c) || c == '|' || !unicode.IsPrint(c) }) >= 0 {
		return &ProfileError{Field: field, Msg: fmt.Sprintf("%q is not a checkpoint reason; write one token such as \"pre-wave-2\" (no spaces or '|')", r)}
	}
	n := strings.Count(r, "{N}")
	switch {
	case pattern && n != 1:
		return &ProfileError{Field: field, Msg: fmt.Sprintf("%q must contain {N} exactly once, e.g. \"pre-wave-{N}\"", r)}
	case !pattern && n != 0:
		return &ProfileError{Field: field, Msg: fmt.Sprintf("%q contains {N} but the boundary is not a wave boundary; set wave and mid to true, or name one reason", r)}
	}
	return nil
}

func (p *Profile) validateRoles() error {
	return validateRoleLists("class", []roleList{
		{"roles.mutating", p.Roles.Mutating}, {"roles.output", p.Roles.Output}, {"roles.non_artifact", p.Roles.NonArtifact}})
}

// roleList is one list of role names in a profile, with its field name.
type roleList struct {
	field string
	roles []string
}

// validateRoleLists checks that every role of lists is named and in one list
// only; what names the kind of list in the message ("class", "side-effect class").
func validateRoleLists(what string, lists []roleList) error {
	class := map[string]string{}
	for _, l := range lists {
		for i, r := range l.roles {
			f := fmt.Sprintf("%s[%d]", l.field, i)
			if strings.TrimSpace(r) == "" {
				return &ProfileError{Field: f, Msg: "is empty; give the role name the manifest uses"}
			}
			if prev, ok := class[r]; ok && prev != l.field {
				return &ProfileError{Field: f, Msg: fmt.Sprintf("role %q is also in %s; a role has one %s", r, prev, what)}
			}
			class[r] = l.field
		}
	}
	return nil
}
