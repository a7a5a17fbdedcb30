package paths

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ResolveArg: what exists is a path (a link, "..", a bare file name included);
// what could be a name and does not exist is a name; a value that cannot be a
// name is a path even when missing.
func TestResolveArg(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "prof"), nil, 0o644))
	require.NoError(t, os.Symlink("/nowhere", filepath.Join(cwd, "dangling")))
	for value, want := range map[string]Arg{
		"..":         {ArgPath, filepath.Dir(cwd)},
		".":          {ArgPath, cwd},
		"prof":       {ArgPath, filepath.Join(cwd, "prof")},
		"dangling":   {ArgPath, filepath.Join(cwd, "dangling")},
		"../x":       {ArgPath, filepath.Join(filepath.Dir(cwd), "x")},
		"a\\b":       {ArgPath, filepath.Join(cwd, "a\\b")},
		"/abs/run":   {ArgPath, "/abs/run"},
		"1775430161": {ArgName, ""},
		"build":      {ArgName, ""},
	} {
		assert.Equal(t, want, ResolveArg(cwd, value), value)
	}
}
