package resume

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
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

// Simulator seed 1133: three implementers of a wave. Task 1's only commit names
// task 2 (its message misleads); task 2's own commit names no task but shares a
// word with its description; task 3's names task 3. Matching the agreeing commits
// first gave task 2 the commit naming it and left task 1 nothing; one matching
// over every edge finds that all three have a commit of their own, and a commit
// that agrees is never displaced by one naming another task.
func TestAttributionMisnamedCommitGoesToItsAuthorWhenTheNamedTaskHasItsOwn(t *testing.T) {
	t.Parallel()
	one, two, three := 1, 2, 3
	t0 := time.Date(2026, 9, 14, 2, 23, 29, 0, time.UTC)
	d1, d2, d3 := 371.0, 1204.0, 1283.0
	ds := []*pipeline.Dispatch{
		{Seq: 8, Role: "build-implementer", Task: &one, Time: t0, DurationS: &d1, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 9, Role: "build-implementer", Task: &three, Time: t0.Add(time.Second), DurationS: &d3, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 10, Role: "build-implementer", Task: &two, Time: t0.Add(2 * time.Second), DurationS: &d2, Recorded: true, Class: "mutating", Status: "completed"},
	}
	log := fakeLog{
		{Hash: strings.Repeat("3", 40), Time: t0.Add(13*time.Minute + 51*time.Second), Message: "feat: task 3 implement the card fingerprint"},
		{Hash: strings.Repeat("2", 40), Time: t0.Add(13*time.Minute + 4*time.Second), Message: "feat: implement proration on plan"},
		{Hash: strings.Repeat("1", 40), Time: t0.Add(3*time.Minute + 36*time.Second), Message: "feat: task 2 subscription proration on plan"},
	}
	describe := func(d *pipeline.Dispatch) string {
		return map[int]string{8: "Task 1: refund ledger", 9: "Task 3: card fingerprint", 10: "Task 2: subscription proration"}[d.Seq]
	}
	for range 3 {
		v := &verifier{profile: testProfile(t), log: log, cache: map[int]Verdict{}, dispatches: ds, describe: describe}
		at := v.attributed()
		require.Len(t, at.Assigned, 3, "every implementer has a commit of its own")
		assert.Equal(t, strings.Repeat("1", 40), at.Assigned[8].Commit.Hash)
		assert.Contains(t, at.Assigned[8].Why, "names another task")
		assert.Equal(t, strings.Repeat("2", 40), at.Assigned[10].Commit.Hash)
		assert.Equal(t, strings.Repeat("3", 40), at.Assigned[9].Commit.Hash)
	}

	// The other side: task 2 committed nothing of its own (its word-sharing
	// commit is gone). Then the commit naming task 2 is task 2's, and task 1
	// proves nothing.
	v := &verifier{profile: testProfile(t), log: fakeLog{log[0], log[2]}, cache: map[int]Verdict{}, dispatches: ds, describe: describe}
	assert.False(t, v.verify(ds[0]).OK, "task 1's only candidate names task 2, whose dispatch has no other")
	assert.True(t, v.verify(ds[2]).OK)
	assert.True(t, v.verify(ds[1]).OK)
}

// Simulator seed 905: a task-less investigator first dispatched while a sibling
// was running, then retried on its own seq after that sibling failed, is still a
// sibling: its dispatch file's header names only its retry's time, so the
// manifest's line order decides. One first dispatched after the failure is a retry.
func TestIsRetryByManifestOrderNotTheRewrittenHeader(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 6, 20, 13, 32, 37, 0, time.UTC)
	d1 := 184.0
	failed := &pipeline.Dispatch{Seq: 1, Role: "investigator", Phase: "1", Time: t0, DurationS: &d1, Recorded: true, Status: "error",
		Entry: &manifest.Entry{Seq: 1, FirstLine: 1, Line: 4}}
	sibling := &pipeline.Dispatch{Seq: 2, Role: "investigator", Phase: "1", Time: t0.Add(9 * time.Minute), Recorded: true, Status: "completed",
		Entry: &manifest.Entry{Seq: 2, FirstLine: 2, Line: 12}}
	retry := &pipeline.Dispatch{Seq: 4, Role: "investigator", Phase: "1", Time: t0.Add(4 * time.Minute), Recorded: true, Status: "completed",
		Entry: &manifest.Entry{Seq: 4, FirstLine: 5, Line: 10}}
	assert.False(t, isRetry(failed, sibling), "dispatched (line 2) before seq 1 failed (line 4): a sibling, though its header is later")
	assert.True(t, isRetry(failed, retry), "first dispatched (line 5) after seq 1 failed (line 4)")

	// The three were given the same instructions: the evidence that a retry is
	// the same work (role and phase alone are not).
	same := func(*pipeline.Dispatch) string { return "Investigate the crash in parser.Parse." }
	a := &Analysis{Dispatches: []*pipeline.Dispatch{failed, sibling, retry}, Redo: []*pipeline.Dispatch{failed, sibling, retry}, describe: same}
	a.groupItems()
	require.Len(t, a.Items, 2, "the sibling is its own item; the retry joins the failed attempt's")
	assert.Equal(t, []int{1, 4}, []int{a.Items[0].Attempts[0].Seq, a.Items[0].Attempts[1].Seq})
	assert.Equal(t, 2, a.Items[1].Dispatch.Seq)
}

// Simulator seed 799: a generic profile guesses "synthesis" is output-producing
// from its name, but its dispatch file says to answer in the conversation. The
// dispatch file is the stronger evidence: nothing asked and nothing found is
// conversation-only. One that asks for a file, or is gone, still fails; and a
// class a built-in profile states is never second-guessed.
func TestGuessedClassYieldsToWhatTheDispatchFileAsks(t *testing.T) {
	t.Parallel()
	generic := templates.Generic(templates.GenericInput{Skill: "audit", Phases: []string{"1", "3"}, Roles: []string{"synthesis", "schema-migrator"}})
	require.Equal(t, templates.RoleOutput, generic.ClassOf("synthesis"))
	t0 := time.Date(2026, 1, 14, 10, 8, 0, 0, time.UTC)
	dur := 60.0
	synth := &pipeline.Dispatch{Seq: 7, Role: "synthesis", Phase: "3", Time: t0, DurationS: &dur, Recorded: true, Status: "completed", Class: templates.RoleOutput}
	mig := &pipeline.Dispatch{Seq: 8, Role: "schema-migrator", Phase: "3", Time: t0, DurationS: &dur, Recorded: true, Status: "completed", Class: templates.RoleMutating}
	for _, tc := range []struct {
		ask  pipeline.Ask
		want bool
	}{{pipeline.AskNothing, true}, {pipeline.AskFile, false}, {pipeline.AskCommit, false}, {pipeline.AskUnknown, false}} {
		var warned []string
		v := &verifier{profile: generic, log: fakeLog{}, cache: map[int]Verdict{}, dispatches: []*pipeline.Dispatch{synth, mig},
			asks: func(*pipeline.Dispatch) pipeline.Ask { return tc.ask }, warn: func(s string) { warned = append(warned, s) }}
		got := v.verify(synth)
		assert.Equal(t, tc.want, got.OK, "ask %v: %s", tc.ask, got.Detail)
		assert.Equal(t, tc.want, v.verify(mig).OK, "ask %v", tc.ask)
		if tc.want {
			assert.Contains(t, strings.Join(warned, "\n"), `role "synthesis" of seq 7: its name suggests output, but its dispatch file asks for no file and no commit`)
		}
	}
	// A stated class (the build profile's reviewer) still needs its output.
	rev := &pipeline.Dispatch{Seq: 9, Role: "code-reviewer", Phase: "4", Time: t0, DurationS: &dur, Recorded: true, Status: "completed", Class: templates.RoleOutput}
	v := &verifier{profile: testProfile(t), cache: map[int]Verdict{}, asks: func(*pipeline.Dispatch) pipeline.Ask { return pipeline.AskNothing }}
	assert.False(t, v.verify(rev).OK)
}
