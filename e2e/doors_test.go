package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose dispatch directory is a symbolic link (the durable copy in the
// scratch dir pointing at another folder, say ~/.claude/commands) makes a
// resume refuse before anything is written: no dispatch file, manifest line,
// torn sidecar or recording lands where the link leads. Read-only commands
// still read the run, and warn.
func TestResumeNeverWritesThroughALinkedDispatchDir(t *testing.T) {
	s, p := pipelineSandbox(t)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.DurableDispatchDir, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.DurableDispatchDir))
	before := digest(t, elsewhere)

	r := runGuarded(t, s, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.NotEqual(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stderr, "symbolic link")
	assert.Equal(t, before, digest(t, elsewhere), "nothing written where the link leads")

	plan := runGuarded(t, s, p.Project, "plan", p.Scratch, "--now", now(p))
	assert.Equal(t, 0, plan.Code, plan.Stderr)
	assert.Contains(t, plan.Stdout+plan.Stderr, "symbolic link", "the plan warns")
}
