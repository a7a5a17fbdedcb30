package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSimDirective(t *testing.T) {
	t.Parallel()
	e, ok, err := parseSimDirective([]byte("# Reviewer\n<!-- replay-sim: flake=0.7 duration=0.5 -->\nbody"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, simEffects{flake: 0.7, hasFlake: true, scale: 0.5}, e)
	_, ok, err = parseSimDirective([]byte("no directive"))
	assert.False(t, ok)
	assert.NoError(t, err)
	for _, bad := range []string{"replay-sim: flake=2", "replay-sim: duration=0", "replay-sim: speed=3", "replay-sim: flake=x"} {
		_, _, err := parseSimDirective([]byte(bad))
		assert.Error(t, err, bad)
	}
}
