package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPushCreatesAMissingStoreDirectory pushes into a directory that does not exist
// yet: it is created (as mkdir -p would), and the run can be pulled back from it.
func TestPushCreatesAMissingStoreDirectory(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	store := filepath.Join(t.TempDir(), "shared", "runs")
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", store)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "created the store directory "+store)
	assert.DirExists(t, store)
	r = s.Run(t, p.Project, "pull", store, "--into", filepath.Join(t.TempDir(), "copy"))
	assert.Equal(t, 0, r.Code, r.Stderr)

	r = s.Run(t, p.Project, "push", p.Scratch, "--to", "file://"+filepath.Join(t.TempDir(), "via-url"))
	assert.Equal(t, 0, r.Code, r.Stderr)
}
