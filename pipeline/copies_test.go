package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/replaytool/replay/manifest"
)

func TestMergeManifestTakesTheSeqsAnotherCopyRecordsMoreOf(t *testing.T) {
	t.Parallel()
	durable := &manifest.Manifest{
		Entries: []manifest.Entry{{Seq: 1, Status: manifest.StatusCompleted}, {Seq: 2, Status: manifest.StatusDispatched}},
		History: map[int][]manifest.Status{1: {"dispatched", "completed"}, 2: {"dispatched"}},
		MaxSeq:  2,
	}
	live := &manifest.Manifest{
		Entries: []manifest.Entry{{Seq: 1, Status: manifest.StatusDispatched}, {Seq: 2, Status: manifest.StatusCompleted}, {Seq: 3, Status: manifest.StatusDispatched}},
		History: map[int][]manifest.Status{1: {"dispatched"}, 2: {"dispatched", "completed"}, 3: {"dispatched"}},
		MaxSeq:  5, // a torn line of seq 5
	}
	taken := mergeManifest(durable, live)
	assert.Equal(t, []int{2, 3}, taken)
	assert.Equal(t, 5, durable.MaxSeq)
	assert.Equal(t, manifest.StatusCompleted, durable.Entries[0].Status, "seq 1: the durable copy records more of it")
	assert.Equal(t, manifest.StatusCompleted, durable.Entries[1].Status, "seq 2: the live copy records more of it")
	assert.Equal(t, 3, durable.Entries[2].Seq)
	assert.Equal(t, "2-3, 7, 9-10", seqRanges([]int{2, 3, 7, 9, 10}))
}
