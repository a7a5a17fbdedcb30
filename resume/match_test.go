package resume

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/pipeline"
)

// Issue 28 symptom 2: task 2's window holds both task-less commits, task 1's only
// the older one; greedy attribution gave task 2 the older one and starved task 1.
// The one-to-one matching verifies both.
func TestAttributionMatchingVerifiesBothWhereGreedyStarvedOne(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	t0 := time.Date(2026, 4, 7, 15, 0, 0, 0, time.UTC)
	d1, d2 := 480.0, 1200.0
	ds := []*pipeline.Dispatch{
		{Seq: 4, Role: "implementer", Task: &one, Time: t0, DurationS: &d1, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 5, Role: "implementer", Task: &two, Time: t0.Add(time.Second), DurationS: &d2, Recorded: true, Class: "mutating", Status: "completed"},
	}
	log := fakeLog{
		{Hash: strings.Repeat("b", 40), Time: t0.Add(10 * time.Minute), Message: "feat: implement refund endpoint"},
		{Hash: strings.Repeat("a", 40), Time: t0.Add(5 * time.Minute), Message: "feat: implement charge model"},
	}
	v := &verifier{profile: testProfile(t), log: log, cache: map[int]Verdict{}, dispatches: ds}
	got1, got2 := v.verify(ds[0]), v.verify(ds[1])
	require.True(t, got1.OK, got1.Detail)
	require.True(t, got2.OK, got2.Detail)
	assert.Contains(t, got1.Detail, "aaaaaaa")
	assert.Contains(t, got2.Detail, "bbbbbbb")
}

// The matching is deterministic and prefers evidence: a commit naming a task goes
// to that task, and an attempt superseded by a retry (dispatched after it failed)
// is charged with nothing, even a commit naming its task in its window.
func TestAttributionMatchingPreferencesAndSuperseded(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	t0 := time.Date(2026, 4, 7, 15, 0, 0, 0, time.UTC)
	short, long := 300.0, 900.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "implementer", Task: &one, Time: t0, DurationS: &short, Recorded: true, Class: "mutating", Status: "failed"},
		{Seq: 2, Role: "implementer", Task: &two, Time: t0, DurationS: &long, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 3, Role: "implementer", Task: &one, Time: t0.Add(6 * time.Minute), DurationS: &long, Recorded: true, Class: "mutating", Status: "completed"},
	}
	log := fakeLog{
		{Hash: strings.Repeat("c", 40), Time: t0.Add(9 * time.Minute), Message: "feat: task 2 payouts"},
		{Hash: strings.Repeat("d", 40), Time: t0.Add(4 * time.Minute), Message: "wip: task 1 charges"},
	}
	a := &Analysis{Dispatches: ds}
	for i := 0; i < 3; i++ {
		v := &verifier{profile: testProfile(t), log: log, cache: map[int]Verdict{}, dispatches: ds, superseded: a.hasLaterAttempt}
		at := v.attributed()
		assert.Equal(t, strings.Repeat("c", 40), at.Assigned[2].Commit.Hash)
		_, charged := at.Assigned[1]
		assert.False(t, charged, "the failed attempt superseded by seq 3 is charged with nothing")
		_, got3 := at.Assigned[3]
		assert.False(t, got3, "the commit before the retry started is not the retry's")
	}
	assert.True(t, isRetry(ds[0], ds[2]))
	sibling := *ds[2]
	sibling.Time = t0
	assert.False(t, isRetry(ds[0], &sibling), "a sibling dispatched with the failed attempt is other work")
}

func TestHungarianMaxFindsTheHeaviestAssignment(t *testing.T) {
	t.Parallel()
	w := [][]int64{{7, 5, 0}, {6, 0, 0}, {0, 4, 3}}
	got := hungarianMax(w)
	assert.Equal(t, []int{1, 0, 2}, got) // 5+6+3 = 14 beats 7+4+0
}

// A misleading message: two commits both name task 2, one dispatch has task 1 and
// one task 2. Task 2 takes one by its number; the other, though it names task 2,
// is task 1's: every one-to-one matching of what is left gives it to task 1. A
// lone commit naming another task still proves nothing.
func TestAttributionMisleadingTaskNumberOnlyWhenForced(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	t0 := time.Date(2026, 11, 4, 8, 45, 0, 0, time.UTC)
	dur := 1000.0
	ds := []*pipeline.Dispatch{
		{Seq: 7, Role: "implementer", Task: &one, Time: t0, DurationS: &dur, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 8, Role: "implementer", Task: &two, Time: t0, DurationS: &dur, Recorded: true, Class: "mutating", Status: "completed"},
	}
	log := fakeLog{
		{Hash: strings.Repeat("e", 40), Time: t0.Add(12 * time.Minute), Message: "feat: task 2 implement the ledger reconciliation"},
		{Hash: strings.Repeat("f", 40), Time: t0.Add(10 * time.Minute), Message: "feat: task 2 ledger reconciliation job for"},
	}
	v := &verifier{profile: testProfile(t), log: log, cache: map[int]Verdict{}, dispatches: ds}
	got7, got8 := v.verify(ds[0]), v.verify(ds[1])
	require.True(t, got8.OK, got8.Detail)
	require.True(t, got7.OK, got7.Detail)
	assert.Contains(t, got7.Detail, "names another task")

	v = &verifier{profile: testProfile(t), log: log[:1], cache: map[int]Verdict{}, dispatches: ds}
	assert.False(t, v.verify(ds[0]).OK, "the only commit names task 2: it is task 2's")
	assert.True(t, v.verify(ds[1]).OK)
}
