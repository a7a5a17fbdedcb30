package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/replicate"
)

func TestReplicaModelShowsArmReplicaDispatchAndElapsed(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC)}
	var m = newReplicaModel(clock.now)
	base := replicate.ReplicaRun{Arm: replicate.Baseline, Index: 2, Of: 3, Session: "s-2"}
	mut := replicate.ReplicaRun{Arm: replicate.Mutated, Index: 1, Of: 3, Session: "s-3"}
	next, _ := m.Update(replicaStartedMsg{mut})
	clock.t = clock.t.Add(4 * time.Second)
	next, _ = next.Update(replicaStartedMsg{base})
	next, _ = next.Update(replicaDispatchMsg{base, redispatch.DispatchProgress{N: 1, Of: 9, Seq: 21, ReplayOf: 11, Role: "build-implementer", Phase: "3", Task: "1"}})
	clock.t = clock.t.Add(10 * time.Second)
	lines := strings.Split(next.View(), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasSuffix(lines[0], "baseline replica 2/3 (session s-2) — seq 21 (replay of 11) build-implementer phase 3 task 1 — 10s"), lines[0])
	assert.True(t, strings.HasSuffix(lines[1], "mutated replica 1/3 (session s-3) — starting — 14s"), lines[1])
	next, _ = next.Update(replicaFinishedMsg{base})
	assert.NotContains(t, next.View(), "baseline")
	next, _ = next.Update(stopMsg{})
	assert.Empty(t, next.View())
}

func TestReplicaBoardPrintsEachFinishedReplicaWithItsOutcome(t *testing.T) {
	t.Parallel()
	var out testtools.Buffer
	b := NewReplicaBoard(&out, time.Now)
	b.Start()
	for i := 1; i <= 2; i++ {
		r := replicate.ReplicaRun{Arm: replicate.Baseline, Index: i, Of: 2, Session: "s"}
		b.ReplicaStarted(r)
		b.ReplicaFinished(r, "9 dispatches, 1 failed")
	}
	b.Stop()
	got := out.String()
	assert.Contains(t, got, "baseline replica 1/2 (session s) done in 0s: 9 dispatches, 1 failed")
	assert.Less(t, strings.Index(got, "replica 1/2"), strings.Index(got, "replica 2/2"))
}

func TestReplicaLinesOnlyWhenAReplicaIsDone(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	clock := &fakeClock{t: time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC)}
	l := &ReplicaLines{W: &out, Now: clock.now}
	r := replicate.ReplicaRun{Arm: replicate.Mutated, Index: 1, Of: 4, Session: "s-9"}
	l.ReplicaStarted(r)
	l.ReplicaDispatch(r, redispatch.DispatchProgress{N: 1, Of: 2, Seq: 30})
	assert.Empty(t, out.String(), "nothing is printed as a result before it exists")
	clock.t = clock.t.Add(17 * time.Second)
	l.ReplicaFinished(r, "9 dispatches")
	assert.Equal(t, "mutated replica 1/4 (session s-9) done in 17s: 9 dispatches\n", out.String())
}
