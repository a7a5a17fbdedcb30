package templates

import (
	"slices"
)

// EffectClass says what a role's dispatch changes besides its own answer, which
// decides whether a replay may run it live.
type EffectClass string

// The side-effect classes of a role. A pure role writes only its dispatch-dir files
// (findings, receipts); a commits role creates commits in the worktree; an external
// role touches the world outside the tree (pushes, pull requests, deploys, posts)
// and never runs live during a replay without --allow-external.
const (
	EffectPure     EffectClass = "pure"
	EffectCommits  EffectClass = "commits"
	EffectExternal EffectClass = "external"
)

// SideEffects lists the roles of each side-effect class. A role in no list takes
// the class of its verification class: mutating roles commit, output and
// non-artifact roles are pure, and a role the profile does not know is taken as
// committing (it may commit, and nothing says it reaches outside the tree).
type SideEffects struct {
	Pure     []string `json:"pure,omitempty"`
	Commits  []string `json:"commits,omitempty"`
	External []string `json:"external,omitempty"`
}

// EffectOf returns the side-effect class of role, and whether the profile names it
// in side_effects (false: derived from its role class).
func (p *Profile) EffectOf(role string) (EffectClass, bool) {
	switch {
	case slices.Contains(p.SideEffects.External, role):
		return EffectExternal, true
	case slices.Contains(p.SideEffects.Commits, role):
		return EffectCommits, true
	case slices.Contains(p.SideEffects.Pure, role):
		return EffectPure, true
	}
	switch p.ClassOf(role) {
	case RoleOutput, RoleNonArtifact:
		return EffectPure, false
	}
	return EffectCommits, false
}

// IsExternal reports whether role is of the external class.
func (p *Profile) IsExternal(role string) bool {
	c, _ := p.EffectOf(role)
	return c == EffectExternal
}

// validateSideEffects checks that every listed role is named and in one class only.
func (p *Profile) validateSideEffects() error {
	return validateRoleLists("side-effect class", []roleList{
		{"side_effects.pure", p.SideEffects.Pure}, {"side_effects.commits", p.SideEffects.Commits}, {"side_effects.external", p.SideEffects.External}})
}
