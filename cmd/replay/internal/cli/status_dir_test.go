package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// A mistyped DIR is a usage error, never "no pipeline here"; the project's own DIR,
// given relative or absolute, lists its pipeline.
func TestStatusDirMustExist(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)

	r := runFixture(t, p, false, nil, "status", filepath.Join(p.Root, "no", "such", "dir"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no such project directory")
	assert.Empty(t, r.stdout)

	r = runFixture(t, p, false, nil, "status", p.Project)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1775430161")
}
