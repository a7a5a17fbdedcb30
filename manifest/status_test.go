package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadReplayedStatus(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), ManifestFile,
		`{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"dispatched"}`+"\n"+
			`{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"replayed"}`+"\n")
	m, err := Read(path)
	require.NoError(t, err)
	assert.Zero(t, m.Stats.Corrupt, "replayed is a known status, not a corrupt line")
	assert.Equal(t, StatusReplayed, m.Entry(19).Status)
	assert.True(t, StatusReplayed.Final())
}
