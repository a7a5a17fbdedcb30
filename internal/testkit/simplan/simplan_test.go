package simplan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/pipesim"
)

func TestCountSkillRuns(t *testing.T) {
	var plan struct{ Skip, Redo []Row }
	require.NoError(t, json.Unmarshal([]byte(`{"skip":[{"seq":1},{"seq":2}],"redo":[{"seq":3,"run":"live"},{"seq":4,"run":"skill"},{"seq":5,"run":"skill"}]}`), &plan))
	assert.Equal(t, []int{1, 2}, Seqs(plan.Skip))
	assert.Equal(t, []int{3, 4, 5}, Seqs(plan.Redo))
	assert.Nil(t, Seqs(nil))

	d := pipesim.Decision{Executed: []int{3}}
	CountSkillRuns(&d, plan.Redo)
	assert.Equal(t, []int{3, 4, 5}, d.Executed, "the rows the skill dispatches count as run")

	refused := pipesim.Decision{Refuses: true}
	CountSkillRuns(&refused, plan.Redo)
	assert.Empty(t, refused.Executed, "a refused run hands nothing to the skill")
}
