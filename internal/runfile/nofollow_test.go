//go:build unix

package runfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadFileIn and OpenNoFollow never read through a link (to a private file, to
// /dev/zero, a linked folder on the way), never block on a FIFO and never leave
// the root; a real file inside is read whole.
func TestNoFollowReadsRefuseLinksFIFOsAndEscapes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("PRIVATE"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "real"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "real", "f"), []byte("ok"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(root, "real", "secret")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "real", "zero")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "real", "fifo"), 0o644))
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(root, "linked")))
	require.NoError(t, os.Symlink("real", filepath.Join(root, "inside")))

	got, err := ReadFileIn(root, "real/f", Skill)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(got))
	for rel, want := range map[string]error{
		"real/secret":   ErrLink,
		"real/zero":     ErrLink,
		"real/fifo":     ErrNotRegular,
		"linked/secret": ErrLink,
		"inside/f":      ErrLink, // a link that stays inside the root is not followed either
	} {
		_, err := ReadFileIn(root, rel, Skill)
		assert.ErrorIs(t, err, want, rel)
	}
	_, err = ReadFileIn(root, "../secret", Skill)
	assert.ErrorContains(t, err, "leaves")

	_, err = OpenNoFollow(filepath.Join(root, "real", "secret"), Skill)
	assert.ErrorIs(t, err, ErrLink)
	f, err := OpenNoFollow(filepath.Join(root, "real", "f"), Skill)
	require.NoError(t, err)
	f.Close()
}
