//go:build unix

package checkpoint

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A .gitignore planted as a FIFO or as a link to a private file: checkpoint
// create neither waits on it nor reads through it (git refuses a linked
// .gitignore too), and the checkpoint is taken.
func TestCreateNeverWaitsOnOrFollowsAnIgnoreFile(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	require.NoError(t, os.MkdirAll(p.abs("sub"), 0o755))
	require.NoError(t, syscall.Mkfifo(p.abs("sub/.gitignore"), 0o644))
	secret := filepath.Join(p.root, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("*.go\n"), 0o600))
	require.NoError(t, os.MkdirAll(p.abs("other"), 0o755))
	require.NoError(t, os.Symlink(secret, p.abs("other/.gitignore")))
	p.write("other/kept.go", "package other\n")
	done := make(chan error, 1)
	go func() {
		_, _, err := p.store().Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("checkpoint create waited on a FIFO .gitignore")
	}
}
