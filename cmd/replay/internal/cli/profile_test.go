package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProfileFlagParsing(t *testing.T) {
	t.Parallel()
	f := &Factory{}
	var plan *PlanOptions
	cmd := NewCmdPlan(f, func(o *PlanOptions) error { plan = o; return nil })
	cmd.SetArgs([]string{"some/dir", "--profile", "mine.json"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "mine.json", plan.Profile)
	assert.Equal(t, "some/dir", plan.Path)

	var res *ResumeOptions
	cmd = NewCmdResume(f, func(o *ResumeOptions) error { res = o; return nil })
	cmd.SetArgs([]string{"--profile=other.json", "--dry-run"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "other.json", res.Profile)

	var st *StatusOptions
	cmd = NewCmdStatus(f, func(o *StatusOptions) error { st = o; return nil })
	cmd.SetArgs([]string{"--profile", "third.json"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "third.json", st.Profile)

	cmd = NewCmdPlan(f, func(*PlanOptions) error { return nil })
	cmd.SetArgs([]string{"--profile"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	assert.ErrorContains(t, cmd.Execute(), "flag needs an argument")
}
