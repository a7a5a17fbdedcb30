package mutate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"build-implementer", "build-reviewer", "cleanup", "adversarial-tester"}
	assert.Equal(t, []string{"build-reviewer", "build-implementer", "cleanup", "adversarial-tester"}, Closest("build-reveiwer", names)[:4])
	assert.Equal(t, "cleanup", Closest("clenup", names)[0])
}

func TestUnknown(t *testing.T) {
	t.Parallel()
	run := []string{"build-implementer", "build-reviewer", "cleanup", "build-implementer"}
	ok := []Mutation{{Orig: "build-reviewer-prompt.md", Repl: "s.md"}, {Orig: "cleanup.md", Repl: "c.md"}}
	require.NoError(t, Unknown(ok, run, ""))

	bad := []Mutation{{Orig: "build-reveiwer-prompt.md", Repl: "s.md"}}
	err := Unknown(bad, run, "")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrBadMutation)
	assert.Equal(t, `--mutate build-reveiwer-prompt.md=s.md: template "build-reveiwer-prompt.md" is unknown: no dispatch of the run uses it; the run uses build-reviewer, build-implementer, cleanup`, err.Error())

	// A template the run does not use but --templates has is fine (it may be used
	// by a dispatch the replay adds); one it does not have names the folder.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "red-team-prompt.md"), []byte("# red team\n"), 0o644))
	require.NoError(t, Unknown([]Mutation{{Orig: "red-team-prompt.md", Repl: "r.md"}}, run, dir))
	err = Unknown(bad, run, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "and "+dir+" has no such template")

	err = Unknown(bad, nil, "")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "; the run uses")
	assert.ErrorIs(t, err, ErrBadMutation)
}
