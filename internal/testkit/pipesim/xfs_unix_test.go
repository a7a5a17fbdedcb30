//go:build unix

package pipesim

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// xReadFile reads what os.ReadFile reads, at every size around its pooled
// buffer's, one read after another (a buffer kept from a larger file must not
// leak into a smaller one), and fails as it fails.
func TestXReadFileEqualsOSReadFile(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 511, 512, 32<<10 - 1, 32 << 10, 32<<10 + 1, 3 << 20, 7, 0} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		p := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(p, data, 0o644))
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := xReadFile(p)
		require.NoError(t, err)
		require.Equal(t, want, got, "size %d", n)
	}
	_, err := xReadFile(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = xReadFile(dir)
	require.Error(t, err)
}
