package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"skill":"mine","phases":[{"id":"a"},{"id":"b"}],"boundaries":[{"name":"Pre-b","phase":"b","reasons":["pre-b"]}]}`), 0o644))
	p, err := LoadFile(good)
	require.NoError(t, err)
	assert.Equal(t, "mine", p.Skill)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"skill":"mine","phases":[{"id":"a"}],"boundaries":[{"name":"x","phase":"z","reasons":["r"]}]}`), 0o644))
	_, err = LoadFile(bad)
	require.Error(t, err)
	assert.Equal(t, "pipeline profile "+bad+`: field boundaries[0].phase: names unknown phase "z"; use one of the ids under phases`, err.Error())

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(" ", MaxProfileSize+1)), 0o644))
	_, err = LoadFile(big)
	assert.ErrorContains(t, err, "larger than")

	_, err = LoadFile(dir)
	assert.ErrorContains(t, err, "not a regular file")

	_, err = LoadFile(filepath.Join(dir, "missing.json"))
	assert.ErrorContains(t, err, "cannot open it")

	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err == nil {
		_, err = LoadFile(fifo)
		assert.ErrorContains(t, err, "not a regular file")
	}
}

func TestGeneric(t *testing.T) {
	t.Parallel()
	p := Generic(GenericInput{
		Skill:  "forge",
		Phases: []string{"2", "10", "1", "", "1.5", "review", "2"},
		Marks: []GenericMark{
			{Reason: "pre-forge-gate", Phase: "2", Opens: true},
			{Reason: "pre-forge-round-2", Phase: "2"},
			{Reason: "pre-restore-safety", Phase: "10"},
			{Reason: "pre-other-start", Phase: "2", Opens: true},
			{Reason: "pre-ghost", Phase: "77", Opens: true},
		},
		Roles: []string{"schema-migrator", "lint-reviewer", "merge-gate", "astrologer"},
	})
	assert.True(t, p.Generic)
	assert.Equal(t, "forge", p.Skill)
	assert.Equal(t, []string{"1", "1.5", "2", "10", "review"}, phaseIDs(p))
	require.Len(t, p.Boundaries, 5)
	assert.Equal(t, BoundarySpec{Name: "Pre-Phase 2", Phase: "2", Reasons: []string{"pre-forge-gate", "pre-other-start"}}, p.Boundaries[0])
	assert.Equal(t, BoundarySpec{Name: "Mid-Phase 2 (pre-forge-round-2)", Phase: "2", Reasons: []string{"pre-forge-round-2"}, Mid: true}, p.Boundaries[1])
	// every later phase starts a boundary, opened by a checkpoint or not
	assert.Equal(t, []BoundarySpec{{Name: "Pre-Phase 1.5", Phase: "1.5"}, {Name: "Pre-Phase 10", Phase: "10"}, {Name: "Pre-Phase review", Phase: "review"}}, p.Boundaries[2:])
	assert.Equal(t, RoleMutating, p.ClassOf("schema-migrator"))
	assert.Equal(t, RoleOutput, p.ClassOf("lint-reviewer"))
	assert.Equal(t, RoleNonArtifact, p.ClassOf("merge-gate"))
	assert.Equal(t, RoleUnknown, p.ClassOf("astrologer"))

	empty := Generic(GenericInput{})
	assert.Equal(t, "unknown", empty.Skill)
	assert.Equal(t, []string{"1"}, phaseIDs(empty))
}
