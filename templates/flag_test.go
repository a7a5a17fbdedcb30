package templates

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadFlag(t *testing.T) {
	t.Parallel()
	p, err := LoadFlag("build")
	require.NoError(t, err)
	assert.Equal(t, "build", p.Skill)

	_, err = LoadFlag("buidl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipeline profile buidl: no such file and no built-in profile of that name; built-in profiles: build, debugging, siege")

	_, err = LoadFlag(filepath.Join(t.TempDir(), "gone.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such file; give a profile JSON file or a built-in profile name (build, debugging, siege)")

	// A file wins over a built-in name; its errors are the file's.
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.json")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = LoadFlag(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}
