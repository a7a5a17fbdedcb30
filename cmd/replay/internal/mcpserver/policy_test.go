package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathOrName confines what the command would read as a path ("..", a bare file
// name, a link) and lets a name through, by paths.ResolveArg's rule.
func TestPathOrNameAsksTheResolver(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "secret.json"), filepath.Join(project, "prof")))
	require.NoError(t, os.WriteFile(filepath.Join(project, "own.json"), nil, 0o644))
	p := &Policy{Cwd: project, Roots: []string{project}}
	for _, v := range []string{"..", "../x", filepath.Join(root, "run"), "prof"} {
		err := p.pathOrName("other", v)
		var ie *inputError
		require.ErrorAs(t, err, &ie, v)
		assert.Equal(t, "refused", ie.kind, v)
	}
	for _, v := range []string{"1775430161", "build", "own.json", "sub/new.json"} {
		assert.NoError(t, p.pathOrName("other", v), v)
	}
}
