package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/replaytool/replay/manifest"
)

func TestDispatchDoneStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status manifest.Status
		done   bool
		failed bool
	}{
		{manifest.StatusCompleted, true, false},
		{manifest.StatusSkipped, true, false},
		{manifest.StatusReplayed, true, false}, // re-executed by a replay: its replay entries say how that went
		{manifest.StatusDispatched, false, false},
		{manifest.StatusFailed, false, true},
		{manifest.StatusError, false, true},
	}
	for _, tt := range tests {
		d := &Dispatch{Status: tt.status}
		assert.Equal(t, tt.done, d.Done(), tt.status)
		assert.Equal(t, tt.failed, d.Failed(), tt.status)
	}
}
