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

// ReadHeadNoFollow reads the head of a file of any size, and refuses a link
// (to a private file, to /dev/zero) or a FIFO without blocking.
func TestReadHeadNoFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("PRIVATE"), 0o600))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte("0123456789"), 0o644))
	require.NoError(t, os.Truncate(big, 8<<30)) // sparse: 8 GiB, nothing allocated
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "secret")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))

	head, err := ReadHeadNoFollow(big, PlanDocument, 4)
	require.NoError(t, err)
	assert.Equal(t, "0123", string(head))
	for _, name := range []string{"secret", "zero"} {
		_, err := ReadHeadNoFollow(filepath.Join(dir, name), PlanDocument, 4)
		assert.ErrorIs(t, err, ErrLink, name)
	}
	_, err = ReadHeadNoFollow(filepath.Join(dir, "fifo"), PlanDocument, 4)
	assert.ErrorIs(t, err, ErrNotRegular)
}
