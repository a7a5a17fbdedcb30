package templates

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// GenericMark is one checkpoint reason seen in a run, placed in the phase it lies
// in: Opens is set when no dispatch of that phase ran before it (it opens the
// phase), else it lies inside the phase (a mid boundary placed by its time).
type GenericMark struct {
	Reason string
	Phase  string
	Opens  bool
}

// GenericInput is what a generic profile is derived from: a run of a skill no
// profile describes.
type GenericInput struct {
	// Skill is the skill the run names ("" when nothing names one).
	Skill string
	// Phases are the phase values of the manifest, in any order.
	Phases []string
	// Marks are the boundary checkpoints present, oldest first.
	Marks []GenericMark
	// Roles are the roles of the run's dispatches.
	Roles []string
}

// Generic derives a profile from a run's own files: phases from its phase values
// (numeric order where they are numbers), one boundary per checkpoint reason present
// (phase-opening reasons of a phase merged into one boundary), and roles classified
// by their names (ClassifyRoleName), the rest left unknown.
func Generic(in GenericInput) *Profile {
	p := &Profile{Skill: in.Skill, Generic: true, Source: "derived from the run's manifest and checkpoints", CommitWindowToleranceS: 30}
	if p.Skill == "" {
		p.Skill = "unknown"
	}
	for _, ph := range orderPhases(in.Phases) {
		p.Phases = append(p.Phases, Phase{ID: ph})
	}
	if len(p.Phases) == 0 {
		p.Phases = []Phase{{ID: "1"}}
	}
	opening := map[string]int{}
	for _, m := range in.Marks {
		if p.PhaseIndex(m.Phase) < 0 || IsSafetyReason(m.Reason) || strings.Contains(m.Reason, "{N}") {
			continue
		}
		if m.Opens {
			if i, ok := opening[m.Phase]; ok {
				if !slices.Contains(p.Boundaries[i].Reasons, m.Reason) {
					p.Boundaries[i].Reasons = append(p.Boundaries[i].Reasons, m.Reason)
				}
				continue
			}
			opening[m.Phase] = len(p.Boundaries)
			p.Boundaries = append(p.Boundaries, BoundarySpec{Name: "Pre-Phase " + m.Phase, Phase: m.Phase, Reasons: []string{m.Reason}})
			continue
		}
		if hasReason(p.Boundaries, m.Reason) {
			continue
		}
		p.Boundaries = append(p.Boundaries, BoundarySpec{Name: fmt.Sprintf("Mid-Phase %s (%s)", m.Phase, m.Reason), Phase: m.Phase, Reasons: []string{m.Reason}, Mid: true})
	}
	// Every phase after the first starts a boundary, opened by a checkpoint or
	// not: with none of the run's checkpoints to restore, a resume starts there
	// on the current disk state rather than redo the proven phases before it.
	for _, ph := range p.Phases[1:] {
		if _, ok := opening[ph.ID]; !ok {
			p.Boundaries = append(p.Boundaries, BoundarySpec{Name: "Pre-Phase " + ph.ID, Phase: ph.ID})
		}
	}
	for _, role := range in.Roles {
		switch ClassifyRoleName(role) {
		case RoleMutating:
			addOnce(&p.Roles.Mutating, role)
		case RoleOutput:
			addOnce(&p.Roles.Output, role)
		case RoleNonArtifact:
			addOnce(&p.Roles.NonArtifact, role)
		}
	}
	return p
}

// IsSafetyReason reports whether reason is a restore-safety checkpoint
// (pre-restore-safety, pre-restore-safety-file): never a pipeline boundary.
func IsSafetyReason(reason string) bool {
	return strings.HasPrefix(reason, "pre-restore-safety")
}

func hasReason(bs []BoundarySpec, reason string) bool {
	for _, b := range bs {
		if slices.Contains(b.Reasons, reason) {
			return true
		}
	}
	return false
}

func addOnce(list *[]string, s string) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// orderPhases returns the distinct non-empty phase values, numbers first in numeric
// order ("3.5" between "3" and "4"), then the others in their first-seen order.
func orderPhases(values []string) []string {
	var nums, words []string
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			nums = append(nums, v)
		} else {
			words = append(words, v)
		}
	}
	sort.SliceStable(nums, func(i, j int) bool {
		a, _ := strconv.ParseFloat(nums[i], 64)
		b, _ := strconv.ParseFloat(nums[j], 64)
		return a < b
	})
	return append(nums, words...)
}

// roleWords maps name fragments to the class they suggest, checked in order: the
// first fragment found in a role name decides.
var roleWords = []struct {
	word  string
	class RoleClass
}{
	{"gate", RoleNonArtifact}, {"judge", RoleNonArtifact}, {"verifier", RoleNonArtifact},
	{"review", RoleOutput}, {"red-team", RoleOutput}, {"attacker", RoleOutput}, {"analyst", RoleOutput},
	{"investigator", RoleOutput}, {"auditor", RoleOutput}, {"synthesis", RoleOutput}, {"inquisitor", RoleOutput},
	{"innovate", RoleOutput}, {"scout", RoleOutput}, {"explorer", RoleOutput},
	{"implementer", RoleMutating}, {"writer", RoleMutating}, {"fixer", RoleMutating}, {"fix", RoleMutating},
	{"cleanup", RoleMutating}, {"tester", RoleMutating}, {"migrator", RoleMutating}, {"refactor", RoleMutating},
}

// ClassifyRoleName guesses the class of a role no profile names from the words in
// its name ("schema-migrator" is mutating, "lint-reviewer" output-producing,
// "merge-gate" non-artifact); RoleUnknown when no word fits.
func ClassifyRoleName(role string) RoleClass {
	name := strings.ToLower(role)
	for _, w := range roleWords {
		if strings.Contains(name, w.word) {
			return w.class
		}
	}
	return RoleUnknown
}
