//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worktree path that a recorded commit changes is compared with the base
// without reading through what a run planted there: a link to /dev/zero (it
// never ends), a FIFO (it never opens) or a linked directory is refused at
// once, never read; a real file is hashed.
func TestCheckUnchangedNeverReadsThroughPlantedFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "zero")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, "linked")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "real"), []byte("x"), 0o644))
	base := &object.Tree{}
	for _, name := range []string{"zero", "fifo", "linked/secret", "real"} {
		done := make(chan error, 1)
		go func() { done <- checkUnchanged(root, base, name) }()
		select {
		case err := <-done:
			assert.Error(t, err, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("checkUnchanged(%s) blocked or read without end", name)
		}
	}
	require.NoError(t, checkUnchanged(root, base, "absent"), "absent in both")
}
