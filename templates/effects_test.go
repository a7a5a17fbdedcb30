package templates

import (
	"fmt"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildProfileSideEffects(t *testing.T) {
	t.Parallel()
	p, err := Load("build")
	require.NoError(t, err)
	for role, want := range map[string]EffectClass{
		"build-implementer": EffectCommits, "plan-writer": EffectCommits,
		"build-reviewer": EffectPure, "red-team": EffectPure, "quality-gate": EffectPure,
		"finish": EffectExternal,
	} {
		got, named := p.EffectOf(role)
		assert.Equal(t, want, got, role)
		assert.True(t, named, role)
	}
	got, named := p.EffectOf("astrologer")
	assert.Equal(t, EffectCommits, got, "a role the profile does not know may commit")
	assert.False(t, named)
	assert.True(t, p.IsExternal("finish"))
	assert.False(t, p.IsExternal("build-implementer"))
}

func TestSideEffectsDerivedFromRoleClass(t *testing.T) {
	t.Parallel()
	p, err := Load("siege")
	require.NoError(t, err)
	c, named := p.EffectOf("chain-analyst")
	assert.Equal(t, EffectPure, c)
	assert.False(t, named)
	c, _ = p.EffectOf("fix")
	assert.Equal(t, EffectCommits, c)
	c, _ = p.EffectOf("fix-verifier")
	assert.Equal(t, EffectPure, c)
}

func TestParseSideEffects(t *testing.T) {
	t.Parallel()
	base := `{"skill":"x","phases":[{"id":"1"}],"boundaries":[],"roles":{"mutating":["deployer"]},"side_effects":%s}`
	p, err := Parse([]byte(fmt.Sprintf(base, `{"external":["deployer"],"pure":["linter"]}`)))
	require.NoError(t, err)
	assert.True(t, p.IsExternal("deployer"))
	c, named := p.EffectOf("linter")
	assert.Equal(t, EffectPure, c)
	assert.True(t, named)

	_, err = Parse([]byte(fmt.Sprintf(base, `{"external":["deployer"],"commits":["deployer"]}`)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "side_effects.external[0]")
	assert.Contains(t, err.Error(), "one side-effect class")

	_, err = Parse([]byte(fmt.Sprintf(base, `{"external":[""]}`)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "side_effects.external[0]")

	_, err = Parse([]byte(fmt.Sprintf(base, `{"remote":["deployer"]}`)))
	require.Error(t, err, "an unknown class is refused, not ignored")
}
