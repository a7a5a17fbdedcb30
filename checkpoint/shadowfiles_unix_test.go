//go:build unix

package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shadow repository whose pack files or loose objects are not files (a FIFO, a
// link to /dev/zero) or whose pack index is a sparse file of gigabytes is refused
// when it is opened, before go-git, the lean pack reader or replay's own reader
// opens them: checkpoint list, plan and restore hung forever on a FIFO and read
// /dev/zero without end. A real shadow is opened and listed.
func TestShadowFilesThatAreNotFilesAreRefused(t *testing.T) {
	t.Parallel()
	packOf := func(t *testing.T, shadow, ext string) string {
		m, _ := filepath.Glob(filepath.Join(shadow, "objects", "pack", "pack-*"+ext))
		require.NotEmpty(t, m, "the shadow has a pack")
		return m[0]
	}
	plant := map[string]func(t *testing.T, shadow string){
		"fifo pack": func(t *testing.T, shadow string) {
			p := packOf(t, shadow, ".pack")
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		},
		"fifo idx": func(t *testing.T, shadow string) {
			p := packOf(t, shadow, ".idx")
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		},
		"idx linked to /dev/zero": func(t *testing.T, shadow string) {
			p := packOf(t, shadow, ".idx")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("/dev/zero", p))
		},
		"sparse 3 GiB idx": func(t *testing.T, shadow string) {
			require.NoError(t, os.Truncate(packOf(t, shadow, ".idx"), 3<<30))
		},
		"fifo loose object": func(t *testing.T, shadow string) {
			out, err := exec.Command("git", "--git-dir", shadow, "rev-parse", "HEAD").Output()
			require.NoError(t, err)
			h := string(out[:40])
			loose := filepath.Join(shadow, "objects", h[:2], h[2:])
			require.NoError(t, os.Remove(loose), "the commit is a loose object")
			require.NoError(t, syscall.Mkfifo(loose, 0o644))
		},
	}
	for name, fn := range plant {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newTestProject(t)
			_, _, err := p.store().Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
			require.NoError(t, err)
			if name != "fifo loose object" {
				require.NoError(t, exec.Command("git", "--git-dir", p.shadow, "repack", "-a", "-d", "-q").Run())
			}
			fn(t, p.shadow)
			done := make(chan error, 1)
			go func() {
				s, err := Open(p.shadow, p.dir)
				if err == nil {
					_, _, err = s.List()
				}
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Contains(t, err.Error(), p.shadow)
			case <-time.After(30 * time.Second):
				t.Fatal("opening the shadow hung")
			}
		})
	}
	p := newTestProject(t)
	_, _, err := p.store().Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	s, err := Open(p.shadow, p.dir)
	require.NoError(t, err)
	cps, _, err := s.List()
	require.NoError(t, err)
	assert.Len(t, cps, 1)
}
