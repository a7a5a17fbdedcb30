package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
)

// build makes the reference fixture with variants under a fresh temp dir.
func build(t *testing.T, variants ...fixture.Variant) *fixture.Pipeline {
	t.Helper()
	return e2ekit.Hermetic(t, variants...)
}

func load(t *testing.T, p *fixture.Pipeline) *Pipeline {
	t.Helper()
	pl, err := Load(Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	return pl
}

// A project reached through a symlink: <H> is hashed from the real path, as
// Crucible does, with the path as given as a second lookup.
func TestProjectThroughSymlink(t *testing.T) {
	p := build(t)
	link := filepath.Join(p.Root, "link")
	require.NoError(t, os.Symlink(p.Project, link))
	pl, err := Load(Options{Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: link})
	require.NoError(t, err)
	assert.Equal(t, p.Scratch, pl.ScratchDir)
	assert.Equal(t, p.Shadow, pl.ShadowDir)
	assert.NotEmpty(t, pl.Checkpoints)
}

func TestPlanTasks(t *testing.T) {
	got := map[int]string{}
	addPlanTasks(got, "# Plan\n\n### Task 1: Charge model\nFiles: billing/charge.go\nAdd the charge model.\n\n### Task 2: Webhook\nWire the webhook.\n## Notes\nnot a task\n- Task 3: refunds (billing/refund.go)\nTask 10 later\n")
	assert.Equal(t, ": Charge model\nFiles: billing/charge.go\nAdd the charge model.\n\n", got[1])
	assert.Equal(t, ": Webhook\nWire the webhook.\n", got[2], "a heading ends the task")
	assert.Equal(t, ": refunds (billing/refund.go)\n", got[3])
	assert.Equal(t, " later\n", got[10])

	// The reference project's plan: the description of a task-3 dispatch holds its
	// plan text as well as its dispatch context.
	p := build(t)
	pl := load(t, p)
	var d19 *Dispatch
	for _, d := range pl.Dispatches {
		if d.Seq == 19 {
			d19 = d
		}
	}
	require.NotNil(t, d19)
	desc := pl.Describe(d19)
	assert.Contains(t, desc, "audit log of login attempts in internal/audit", "dispatch context")
	assert.Contains(t, desc, "audit log of login attempts (internal/audit)", "plan text")
}
