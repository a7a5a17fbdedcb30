package ab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLastDiffRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DiffJSONLFile)
	content := `{"type":"replay-diff","replay_session":"s1","mutations":[],"metrics":{},"outcome":{},"artifact_diff":null,"original_final_sha":"a1","replay_final_sha":"b1"}
{"type":"replay-diff","replay_session":"s2","mutations":[],"metrics":{},"outcome":{},"artifact_diff":{"files_changed":2,"insertions":1,"deletions":0},"original_final_sha":"a2","replay_final_sha":"b2"}
{"torn
{"type":"replay-diff","replay_session":"s1","mutations":["x -> y"],"metrics":{},"outcome":{},"artifact_diff":null,"original_final_sha":"a3","replay_final_sha":"b3"}
`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	r, warns := LastDiffRecord(path, "s1")
	require.NotNil(t, r)
	assert.Equal(t, "a3", r.OriginalFinalSHA, "the last record of the session wins")
	assert.Equal(t, []string{"x -> y"}, r.Mutations)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0], DiffJSONLFile+":3:")
	r, _ = LastDiffRecord(path, "s2")
	require.NotNil(t, r.Artifact)
	assert.Equal(t, 2, r.Artifact.FilesChanged)
	r, _ = LastDiffRecord(path, "none")
	assert.Nil(t, r)
}
