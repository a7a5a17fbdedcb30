//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shadow repository whose pack file is a FIFO (or whose index is a link to
// /dev/zero) is refused at once by every command that opens it: checkpoint list,
// plan and restore waited on it forever. A plan still shows the run, with the
// warning; a real shadow lists its checkpoints.
func TestShadowPackFilesThatAreNotFiles(t *testing.T) {
	s, p := pipelineSandbox(t)
	list := runGuarded(t, s, p.Project, "checkpoint", "list")
	require.Equal(t, 0, list.Code, list.Stderr)
	packs, _ := filepath.Glob(filepath.Join(p.Shadow, "objects", "pack", "pack-*.pack"))
	idxs, _ := filepath.Glob(filepath.Join(p.Shadow, "objects", "pack", "pack-*.idx"))
	require.NotEmpty(t, packs, "the fixture's shadow is packed")
	require.NoError(t, os.Remove(packs[0]))
	require.NoError(t, syscall.Mkfifo(packs[0], 0o644))
	require.NoError(t, os.Remove(idxs[0]))
	require.NoError(t, os.Symlink("/dev/zero", idxs[0]))
	for _, args := range [][]string{
		{"checkpoint", "list"},
		{"checkpoint", "restore", "--yes", "HEAD"},
		{"--yes", "--agent", "builtin:sim", "--now", now(p)},
	} {
		r := runGuarded(t, s, p.Project, args...)
		assert.NotEqual(t, 0, r.Code, "%v: %s", args, r.Stdout)
		assert.Contains(t, r.Stderr, "not a pack file", args)
	}
	plan := runGuarded(t, s, p.Project, "plan", "--now", now(p))
	assert.Contains(t, plan.Stdout+plan.Stderr, "not a pack file", "the plan warns")
}
