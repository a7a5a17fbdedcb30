package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 28 symptom 1, through the CLI: an agent that says "completed" but commits
// nothing leaves its work item to redo. plan, status and the resume then agree: the
// plan lists the item once (the dispatch and its replay are one item), status says
// where the run stopped and counts one item, and the resume re-dispatches exactly
// it instead of printing "nothing to resume".
func TestPlanStatusAndResumeAgreeAfterAnEmptyReplay(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	lazy := writeAgent(t, p, "lazy-agent.sh", "cat >/dev/null\necho 'SUMMARY: done'\n")
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", lazy, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	type planDoc struct {
		CrashedAt string `json:"crashed_at"`
		NextSeq   int    `json:"next_seq"`
		Redo      []struct {
			Seq int `json:"seq"`
		} `json:"redo"`
	}
	r = s.Run(t, p.Project, "plan", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	var plan planDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &plan))
	require.Len(t, plan.Redo, 1, "seq 19 and its replay are one work item")
	assert.Contains(t, plan.CrashedAt, "completed but failed verification")
	assert.NotContains(t, plan.CrashedAt, "nothing incomplete")

	r = s.Run(t, p.Project, "status", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "completed but failed verification; 1 dispatch to re-execute")

	r = s.Run(t, p.Project, p.Scratch, "--yes", "--json", "--agent", lazy, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "nothing to resume")
	var res struct {
		Redispatch []struct {
			Seq      int `json:"seq"`
			ReplayOf int `json:"replay_of"`
		} `json:"redispatch"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	require.Len(t, res.Redispatch, 1)
	assert.Equal(t, plan.Redo[0].Seq, res.Redispatch[0].ReplayOf, "the resume executes the plan's item")
	assert.Equal(t, plan.NextSeq, res.Redispatch[0].Seq, "from the plan's next seq")
}
