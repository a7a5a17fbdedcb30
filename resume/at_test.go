package resume

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

func statusAt(s *Snapshot, seq int) manifest.Status {
	for _, p := range s.Phases {
		for _, d := range p.Dispatches {
			if d.Seq == seq {
				return d.Status
			}
		}
	}
	return ""
}

func TestStateAtMidWave(t *testing.T) {
	t.Parallel()
	p := reference(t)
	pl := load(t, p)

	s, err := StateAt(pl, 12, p.Tmp)
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1", s.Checkpoint.Reason)
	assert.Equal(t, manifest.StatusDispatched, statusAt(s, 11), "seq 11 was still running when seq 12 was sent")
	assert.Equal(t, manifest.StatusDispatched, statusAt(s, 12))
	assert.Equal(t, manifest.StatusFailed, statusAt(s, 6))
	assert.Empty(t, statusAt(s, 13), "nothing after the seq")
	assert.Empty(t, s.FilesChanged)

	s, err = StateAt(pl, 14, p.Tmp)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusCompleted, statusAt(s, 11))
	assert.Equal(t, manifest.StatusDispatched, statusAt(s, 14))
	assert.Contains(t, s.Commits, p.Commits["task1-cleanup"].String())
	assert.Equal(t, p.Commits["task1-cleanup"].String(), s.Head)
	assert.Equal(t, []string{"internal/login/form.go", "internal/login/form_test.go", "internal/session/store.go", "internal/session/store_test.go"}, s.FilesChanged)
	assert.Contains(t, s.CSB.Phase, "3 (Execute), wave 1")

	s, err = StateAt(pl, 3, p.Tmp)
	require.NoError(t, err)
	assert.Equal(t, "start of the pipeline", s.Boundary)
	assert.Nil(t, s.Checkpoint, "no checkpoint was taken before seq 3")
}

func TestStateAtOutOfRange(t *testing.T) {
	t.Parallel()
	pl := load(t, reference(t))
	_, last, ok := SeqRange(pl)
	require.True(t, ok)
	for _, at := range []int{0, -1, last + 1} {
		_, err := StateAt(pl, at, "")
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrBadSeq))
		assert.Contains(t, err.Error(), "give a seq from 1 to")
	}
	_, err := StateAt(pl, last, "")
	assert.NoError(t, err)
}
