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
