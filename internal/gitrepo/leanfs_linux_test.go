package gitrepo

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeanFSWithoutOpenat2: where openat2 is missing, LeanFS leaves every open
// and stat to the chroot, with the same results.
func TestLeanFSWithoutOpenat2(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	lean := LeanFS(osfs.New(root))
	for _, name := range []string{"HEAD", "missing"} {
		f, err := lean.(leanFS).lean(name, os.O_RDONLY)
		assert.Nil(t, f, name)
		assert.NoError(t, err, name)
		fi, err := lean.(leanFS).leanStat(name)
		assert.Nil(t, fi, name)
		assert.NoError(t, err, name)
	}
	f, err := lean.Open("HEAD")
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "ref: refs/heads/main\n", string(b))
	_, err = lean.Stat("missing")
	assert.True(t, os.IsNotExist(err))
}
