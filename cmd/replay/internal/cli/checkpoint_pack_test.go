package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestCheckpointCreateAndRestoreWritePacks drives create and restore through the
// command: the snapshots' objects land in packs that the git binary reads.
func TestCheckpointCreateAndRestoreWritePacks(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	for i := 0; i < 80; i++ {
		sb.write(t, fmt.Sprintf("gen/d%d/f%02d.txt", i%5, i), fmt.Sprintf("v1 %d\n", i))
	}
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1", "--now", "2026-04-07T14:50:00Z")
	require.Equal(t, 0, r.code, r.stderr)
	var shadow string
	require.NoError(t, filepath.Walk(sb.home, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && info.Name() == "pack" && filepath.Base(filepath.Dir(p)) == "objects" {
			shadow = filepath.Dir(filepath.Dir(p))
		}
		return err
	}))
	require.NotEmpty(t, shadow, "the checkpoint wrote a pack")
	m, err := filepath.Glob(filepath.Join(shadow, "objects", "pack", "pack-*.pack"))
	require.NoError(t, err)
	assert.Len(t, m, 1)

	for i := 0; i < 40; i++ {
		sb.write(t, fmt.Sprintf("gen/d%d/f%02d.txt", i%5, i), fmt.Sprintf("v2 %d\n", i))
	}
	r = sb.run(t, false, nil, "checkpoint", "restore", "pre-wave-1", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(filepath.Join(sb.project, "gen", "d1", "f06.txt"))
	require.NoError(t, err)
	assert.Equal(t, "v1 6\n", string(data))
	m, err = filepath.Glob(filepath.Join(shadow, "objects", "pack", "pack-*.pack"))
	require.NoError(t, err)
	assert.Len(t, m, 2, "the safety checkpoint's objects are a second pack")

	testtools.Git(t, "git binary not installed")
	gitcheck.Repo(t, shadow)
}
