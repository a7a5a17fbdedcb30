package templates

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildProfile(t *testing.T) {
	p, err := Load("build")
	require.NoError(t, err)
	assert.Equal(t, "build", p.Skill)
	assert.Equal(t, 2, p.PhaseIndex("3"))
	assert.Equal(t, "Execute", p.PhaseName("3"))
	assert.Equal(t, RoleMutating, p.ClassOf("build-implementer"))
	assert.Equal(t, RoleOutput, p.ClassOf("red-team"))
	assert.Equal(t, RoleNonArtifact, p.ClassOf("quality-gate"))
	assert.Equal(t, RoleUnknown, p.ClassOf("astrologer"))
	assert.True(t, p.IsGateRole("red-team"))
}

func TestWaveOf(t *testing.T) {
	tests := []struct {
		reason string
		want   int
		ok     bool
	}{
		{"pre-wave-1", 1, true},
		{"pre-wave-10", 10, true},
		{"pre-wave-01", 0, false},
		{"pre-wave-", 0, false},
		{"pre-wave-1x", 0, false},
		{"pre-plan-gate", 0, false},
	}
	for _, tt := range tests {
		n, ok := WaveOf("pre-wave-{N}", tt.reason)
		assert.Equal(t, tt.ok, ok, tt.reason)
		assert.Equal(t, tt.want, n, tt.reason)
	}
	assert.Equal(t, "pre-wave-3", WaveReason("pre-wave-{N}", 3))
}

func TestLoadUnknownAndInvalid(t *testing.T) {
	_, err := Load("nope")
	assert.ErrorContains(t, err, `no pipeline profile for skill "nope"`)
	_, err = Parse([]byte(`{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"9","reasons":["r"]}]}`))
	assert.ErrorContains(t, err, `unknown phase "9"`)
}

func TestEmbeddedProfilesLoad(t *testing.T) {
	t.Parallel()
	for _, name := range Known() {
		p, err := Load(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, p.Skill)
		assert.NotEmpty(t, p.Source, "%s: say where the profile's facts come from", name)
		assert.True(t, Has(name))
	}
	assert.ElementsMatch(t, []string{"build", "debugging", "siege"}, Known())
	assert.False(t, Has("../build"))
	_, err := Load("../build")
	assert.Error(t, err)
}

func TestDebuggingAndSiegeProfiles(t *testing.T) {
	t.Parallel()
	d, err := Load("debugging")
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3", "3.5", "4", "4.5", "5"}, phaseIDs(d))
	assert.Equal(t, RoleMutating, d.ClassOf("where-else"))
	assert.Equal(t, RoleNonArtifact, d.ClassOf("investigator"), "upstream's investigator prompt asks for a report in the conversation, no file")
	assert.Equal(t, RoleNonArtifact, d.ClassOf("synthesis"))
	assert.Equal(t, RoleNonArtifact, d.ClassOf("quality-gate"))
	n, ok := WaveOf(d.Phases[4].Waves, "pre-debug-fix-cycle-2")
	assert.True(t, ok)
	assert.Equal(t, 2, n)

	s, err := Load("siege")
	require.NoError(t, err)
	assert.Equal(t, "Security Gate", s.PhaseName("4"))
	assert.Equal(t, RoleOutput, s.ClassOf("chain-analyst"))
	assert.Equal(t, RoleMutating, s.ClassOf("fix"))
}

func phaseIDs(p *Profile) []string {
	var ids []string
	for _, ph := range p.Phases {
		ids = append(ids, ph.ID)
	}
	return ids
}

func TestParseNamesTheField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, field, msg string
	}{
		{"empty", ``, "", "is empty"},
		{"syntax", "{\n \"skill\": \"x\",,\n}", "", "line 2 column"},
		{"truncated", `{"skill":"x","phases":[`, "", "ends in the middle"},
		{"unknown key", `{"skill":"x","phase":[]}`, "phase", "not a profile field"},
		{"wrong type", `{"skill":"x","phases":{"id":"1"}}`, "phases", "want []templates.Phase"},
		{"no skill", `{"phases":[{"id":"1"}]}`, "skill", "missing or empty"},
		{"no phases", `{"skill":"x"}`, "phases", "missing or empty"},
		{"empty phase id", `{"skill":"x","phases":[{"id":""}]}`, "phases[0].id", "missing or empty"},
		{"repeated phase", `{"skill":"x","phases":[{"id":"1"},{"id":"1"}]}`, "phases[1].id", "repeats phase"},
		{"bad waves", `{"skill":"x","phases":[{"id":"1","waves":"pre-wave"}]}`, "phases[0].waves", "{N} exactly once"},
		{"unknown phase", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"9","reasons":["r"]}]}`, "boundaries[0].phase", `unknown phase "9"`},
		{"no reasons", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"1"}]}`, "boundaries[0].reasons", "missing or empty"},
		{"spaced reason", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"1","reasons":["pre x"]}]}`, "boundaries[0].reasons[0]", "not a checkpoint reason"},
		{"pattern on plain", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"1","reasons":["pre-{N}"]}]}`, "boundaries[0].reasons[0]", "not a wave boundary"},
		{"wave without waves", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"name":"b","phase":"1","reasons":["pre-{N}"],"mid":true,"wave":true}]}`, "boundaries[0].wave", "no waves pattern"},
		{"wave not mid", `{"skill":"x","phases":[{"id":"1","waves":"pre-{N}"}],"boundaries":[{"name":"b","phase":"1","reasons":["pre-{N}"],"wave":true}]}`, "boundaries[0].mid", "must be true"},
		{"no name", `{"skill":"x","phases":[{"id":"1"}],"boundaries":[{"phase":"1","reasons":["r"]}]}`, "boundaries[0].name", "missing or empty"},
		{"two classes", `{"skill":"x","phases":[{"id":"1"}],"roles":{"mutating":["a"],"output":["a"]}}`, "roles.output[0]", "also in roles.mutating"},
		{"empty role", `{"skill":"x","phases":[{"id":"1"}],"roles":{"non_artifact":[" "]}}`, "roles.non_artifact[0]", "is empty"},
		{"tolerance", `{"skill":"x","phases":[{"id":"1"}],"commit_window_tolerance_s":-1}`, "commit_window_tolerance_s", "between 0 and"},
		{"two documents", `{"skill":"x","phases":[{"id":"1"}]} {}`, "", "more than one JSON document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.json))
			var pe *ProfileError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.field, pe.Field)
			assert.Contains(t, pe.Error(), tt.msg)
		})
	}
	p, err := Parse([]byte(`{"skill":"x","phases":[{"id":"1"},{"id":"2","waves":"pre-round-{N}"}],"boundaries":[{"name":"Pre-Phase 2","phase":"2","reasons":["pre-round-1"]},{"name":"Round {N}","phase":"2","reasons":["pre-round-{N}"],"mid":true,"wave":true}],"roles":{"mutating":["fixer"]}}`))
	require.NoError(t, err)
	assert.Equal(t, RoleMutating, p.ClassOf("fixer"))
}
