package checkpoint

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// progressLog records the highest count reported per step and how many calls came.
type progressLog struct {
	mu    sync.Mutex
	done  map[string]int
	total map[string]int
	calls map[string]int
}

func (l *progressLog) report(step string, done, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done[step] = max(l.done[step], done)
	l.total[step] = total
	l.calls[step]++
}

func TestFileProgressCountsHashedAndWrittenFiles(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	for i := range 40 {
		p.write(fmt.Sprintf("gen/f%02d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	s := p.store()
	log := &progressLog{done: map[string]int{}, total: map[string]int{}, calls: map[string]int{}}
	s.SetFileProgress(log.report)

	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	files := log.total["hashing"]
	assert.GreaterOrEqual(t, files, 40, "every file of the tree is counted")
	assert.Equal(t, files, log.done["hashing"], "the count reaches the total")
	assert.Zero(t, log.calls["writing"], "a snapshot writes nothing into the tree")

	for i := range 10 {
		p.write(fmt.Sprintf("gen/f%02d.txt", i), "changed\n")
	}
	_, err = s.Restore(*cp, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, 10, log.total["writing"], "only the changed files are written back")
	assert.Equal(t, 10, log.done["writing"])
}
