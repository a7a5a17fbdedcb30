package templates

import (
	"embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

//go:embed *.json
var profiles embed.FS

// RoleClass says how a completed dispatch of a role is verified.
type RoleClass string

// The role classes of SPEC §2. RoleUnknown is verified by any evidence.
const (
	RoleMutating    RoleClass = "mutating"
	RoleOutput      RoleClass = "output"
	RoleNonArtifact RoleClass = "non-artifact"
	RoleUnknown     RoleClass = "unknown"
)

// Phase is one phase of a pipeline.
type Phase struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Waves, when set, is the checkpoint reason pattern (with {N}) that splits the
	// phase into waves.
	Waves string `json:"waves,omitempty"`
}

// BoundarySpec describes one kind of resume boundary: the phase it opens or lies in,
// and the checkpoint reasons that mark it.
type BoundarySpec struct {
	Name    string   `json:"name"`
	Phase   string   `json:"phase"`
	Reasons []string `json:"reasons"`
	// Mid marks a boundary inside its phase, placed by its checkpoint's time; a
	// boundary without Mid opens its phase.
	Mid bool `json:"mid"`
	// Wave marks the pattern boundary of a wave (reasons contain {N}).
	Wave bool `json:"wave"`
	// OpenedBy names the roles whose first dispatch in the phase comes right after a
	// mid boundary; it places the boundary when its checkpoint is missing.
	OpenedBy []string `json:"opened_by,omitempty"`
}

// Profile is a pipeline described as data.
type Profile struct {
	Skill string `json:"skill"`
	// Source says where the profile's facts come from (e.g. the upstream SKILL.md it
	// was derived from); informational.
	Source     string         `json:"source,omitempty"`
	Phases     []Phase        `json:"phases"`
	Boundaries []BoundarySpec `json:"boundaries"`
	Roles      struct {
		Mutating    []string `json:"mutating"`
		Output      []string `json:"output"`
		NonArtifact []string `json:"non_artifact"`
	} `json:"roles"`
	// SideEffects names the side-effect class of roles (pure, commits, external);
	// see EffectOf for the roles it does not name.
	SideEffects            SideEffects `json:"side_effects"`
	GateRoles              []string    `json:"gate_roles"`
	TestRoles              []string    `json:"test_roles"`
	CommitWindowToleranceS int         `json:"commit_window_tolerance_s"`
	// Generic is set on a profile derived from a run's own files (an unknown skill);
	// it is never read from JSON.
	Generic bool `json:"-"`
}

// Load returns the embedded profile named skill (e.g. "build").
func Load(skill string) (*Profile, error) {
	if !validSkillName(skill) {
		return nil, fmt.Errorf("no pipeline profile for skill %q; known: %s", skill, strings.Join(Known(), ", "))
	}
	data, err := profiles.ReadFile(skill + ".json")
	if err != nil {
		return nil, fmt.Errorf("no pipeline profile for skill %q; known: %s", skill, strings.Join(Known(), ", "))
	}
	return Parse(data)
}

// Has reports whether an embedded profile exists for skill.
func Has(skill string) bool {
	return slices.Contains(Known(), skill)
}

// Known lists the names of the embedded profiles.
func Known() []string {
	entries, _ := profiles.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	return names
}

// validSkillName reports whether skill can name an embedded profile file: letters,
// digits, '-' and '_' only, so a skill read from a run's files never picks a path.
func validSkillName(skill string) bool {
	if skill == "" || len(skill) > 64 {
		return false
	}
	for _, r := range skill {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// PhaseIndex returns the position of phase id in the profile, or -1.
func (p *Profile) PhaseIndex(id string) int {
	for i, ph := range p.Phases {
		if ph.ID == id {
			return i
		}
	}
	return -1
}

// PhaseName returns the human name of phase id ("Execute"), or "" when unknown.
func (p *Profile) PhaseName(id string) string {
	if i := p.PhaseIndex(id); i >= 0 {
		return p.Phases[i].Name
	}
	return ""
}

// ClassOf returns the role class of role.
func (p *Profile) ClassOf(role string) RoleClass {
	switch {
	case slices.Contains(p.Roles.Mutating, role):
		return RoleMutating
	case slices.Contains(p.Roles.Output, role):
		return RoleOutput
	case slices.Contains(p.Roles.NonArtifact, role):
		return RoleNonArtifact
	}
	return RoleUnknown
}

// IsGateRole reports whether role counts as a quality-gate round.
func (p *Profile) IsGateRole(role string) bool { return slices.Contains(p.GateRoles, role) }

// IsTestRole reports whether role runs or writes tests (acceptance outcomes).
func (p *Profile) IsTestRole(role string) bool { return slices.Contains(p.TestRoles, role) }

// WaveReason returns the checkpoint reason of wave n (e.g. "pre-wave-2").
func WaveReason(pattern string, n int) string {
	return strings.ReplaceAll(pattern, "{N}", strconv.Itoa(n))
}

// WaveOf returns n when reason is the checkpoint reason of wave n under pattern.
func WaveOf(pattern, reason string) (int, bool) {
	prefix, suffix, ok := strings.Cut(pattern, "{N}")
	if !ok || !strings.HasPrefix(reason, prefix) || !strings.HasSuffix(reason, suffix) {
		return 0, false
	}
	digits := reason[len(prefix) : len(reason)-len(suffix)]
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

// WithRunPhases returns p with the phases a run records that p does not name added
// in the run's order: each goes right after the known phase recorded before it (or
// before the first known phase when none was), behind unnamed phases already placed
// there. p itself is not changed; p is returned as is when the run names no new
// phase. seq is the run's phase values in manifest (seq) order. A profile is never
// a whitelist: a phase it does not name keeps its place between its neighbours.
func (p *Profile) WithRunPhases(seq []string) (*Profile, []string) {
	var added []string
	phases := slices.Clone(p.Phases)
	index := func(id string) int {
		for i, ph := range phases {
			if ph.ID == id {
				return i
			}
		}
		return -1
	}
	prev := ""
	for _, id := range seq {
		if id == "" {
			continue
		}
		if index(id) >= 0 {
			prev = id
			continue
		}
		at := 0
		if prev != "" {
			at = index(prev) + 1
			// behind the unnamed phases already placed after prev
			for at < len(phases) && slices.Contains(added, phases[at].ID) {
				at++
			}
		}
		phases = slices.Insert(phases, at, Phase{ID: id})
		added = append(added, id)
		prev = id
	}
	if len(added) == 0 {
		return p, nil
	}
	q := *p
	q.Phases = phases
	return &q, added
}
