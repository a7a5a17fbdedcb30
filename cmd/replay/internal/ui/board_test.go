package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/redispatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestBoardModelShowsOneLinePerRunningDispatch(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC)}
	var m = newBoardModel(clock.now)
	first := redispatch.DispatchProgress{N: 1, Of: 3, Seq: 21, ReplayOf: 11, Role: "build-implementer", Phase: "3", Task: "1"}
	second := redispatch.DispatchProgress{N: 2, Of: 3, Seq: 22, ReplayOf: 12, Role: "cleanup", Phase: "3"}
	next, _ := m.Update(startedMsg{second})
	clock.t = clock.t.Add(5 * time.Second)
	next, _ = next.Update(startedMsg{first})
	clock.t = clock.t.Add(90 * time.Second)

	lines := strings.Split(next.View(), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasSuffix(lines[0], " dispatch 1/3: seq 21 (replay of 11) build-implementer phase 3 task 1 — running 1m30s"), lines[0])
	assert.True(t, strings.HasSuffix(lines[1], " dispatch 2/3: seq 22 (replay of 12) cleanup phase 3 — running 1m35s"), lines[1])

	next, _ = next.Update(finishedMsg{first})
	assert.NotContains(t, next.View(), "seq 21")
	assert.Contains(t, next.View(), "seq 22")
	next, _ = next.Update(stopMsg{})
	assert.Empty(t, next.View(), "nothing live is left behind")
}

func TestDispatchBoardPrintsEveryFinishedLine(t *testing.T) {
	t.Parallel()
	var out testtools.Buffer
	b := NewDispatchBoard(&out, time.Now)
	b.Start()
	for n := 1; n <= 3; n++ {
		d := redispatch.DispatchProgress{N: n, Of: 3, Seq: 20 + n, ReplayOf: 10 + n, Role: "cleanup", Phase: "3"}
		b.DispatchStarted(d)
		b.DispatchFinished(d, "finished "+d.Label())
	}
	b.Stop()
	got := out.String()
	for n := 1; n <= 3; n++ {
		assert.Contains(t, got, "finished seq 2"+string(rune('0'+n)))
	}
	assert.Less(t, strings.Index(got, "finished seq 21"), strings.Index(got, "finished seq 23"), "in order")
}
