package templates

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithRunPhasesPlacesUnnamedPhasesBetweenTheirNeighbours(t *testing.T) {
	t.Parallel()
	p, err := Load("debugging")
	require.NoError(t, err)
	q, added := p.WithRunPhases([]string{"1", "1", "synthesis", "3.5", "x", "y", "4", "4.5"})
	assert.Equal(t, []string{"synthesis", "x", "y"}, added)
	var ids []string
	for _, ph := range q.Phases {
		ids = append(ids, ph.ID)
	}
	assert.Equal(t, []string{"1", "synthesis", "2", "3", "3.5", "x", "y", "4", "4.5", "5"}, ids)
	assert.Equal(t, -1, p.PhaseIndex("synthesis"), "the embedded profile is not changed")

	same, none := p.WithRunPhases([]string{"1", "4"})
	assert.Same(t, p, same)
	assert.Empty(t, none)

	first, _ := p.WithRunPhases([]string{"setup", "1"})
	assert.Equal(t, "setup", first.Phases[0].ID, "an unnamed phase before every known one goes first")
}
