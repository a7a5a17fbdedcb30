package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{1, "file", "1 file"},
		{2, "file", "2 files"},
		{0, "file", "0 files"},
		{1, "dispatch", "1 dispatch"},
		{3, "dispatch", "3 dispatches"},
		{2, "commit", "2 commits"},
		{2, "check", "2 checks"},
		{2, "entry", "2 entries"},
		{2, "day", "2 days"},
		{2, "checkpoint", "2 checkpoints"},
		{2, "failed check", "2 failed checks"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Count(tt.n, tt.noun))
	}
}

func TestTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 4, 7, 20, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	assert.Equal(t, "2026-04-07 18:00:00Z", Time(at))
	assert.Equal(t, "-", Time(time.Time{}))
}
