package redispatch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// buildFixture builds the reference crashed pipeline in a temporary directory,
// with HOME and TMPDIR inside it.
func buildFixture(t *testing.T) *fixture.Pipeline {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	t.Setenv("HOME", p.Home)
	t.Setenv("TMPDIR", p.Tmp)
	return p
}
