package pipesim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judgeTruth is a small run, written by hand: two parallel investigators (two
// work items sharing role and phase) before checkpoint cp1, then an implementer
// that failed on seq 3 and was retried on seq 4 (one work item), in flight at
// the crash; a red-team after it. The truth's boundary is cp1.
func judgeTruth() *Truth {
	inv := Item{Role: "investigator", Phase: "1"}
	inv2 := Item{Role: "investigator", Phase: "1", N: 1}
	impl := Item{Role: "implementer", Phase: "4"}
	red := Item{Role: "red-team", Phase: "4"}
	return &Truth{
		Boundaries: []Boundary{{Name: "start", Exists: true}, {Name: "cp1", Hash: strings.Repeat("a", 40), Exists: true}, {Name: "end", Exists: true}},
		Position:   1,
		Skip:       []int{1, 2},
		Redo:       []Item{impl, red},
		NextSeq:    6,
		Seqs: map[int]SeqTruth{
			1: {Item: inv, Segment: 0, OnDisk: true},
			2: {Item: inv2, Segment: 0, OnDisk: true},
			3: {Item: impl, Segment: 1, Mutating: true, OnDisk: true},
			4: {Item: impl, Segment: 1, Mutating: true},
			5: {Item: red, Segment: 1, OnDisk: true},
		},
		Foreign: map[string]time.Time{},
	}
}

func classes(v Verdict) []string {
	var out []string
	for _, f := range v.Findings {
		out = append(out, f.Property+"/"+f.Class)
	}
	return out
}

func TestJudgeExactDecisionHasNoFinding(t *testing.T) {
	tr := judgeTruth()
	v := Judge(tr, Decision{Checkpoint: strings.Repeat("a", 40), Skip: []int{1, 2}, Redo: []int{4, 5}, NextSeq: 6, Ran: true, Executed: []int{4, 5}})
	assert.Empty(t, classes(v))
	assert.True(t, v.Boundary)
	assert.True(t, v.Exact)
	// a checkpoint named by its short hash is the same boundary
	v = Judge(tr, Decision{Checkpoint: "aaaaaaaa", Skip: []int{1, 2}, Redo: []int{4, 5}, NextSeq: 6})
	assert.Empty(t, classes(v))
}

// Seed 60 of the first simulator: three parallel investigators re-executed
// from the start, and the resume ran the same three. They are three work items;
// the one-decision check must not fire on them.
func TestJudgeOneDecisionDistinctItemsSharingRoleAndPhase(t *testing.T) {
	tr := judgeTruth()
	v := Judge(tr, Decision{Redo: []int{1, 2, 4, 5}, NextSeq: 6, Ran: true, Executed: []int{2, 1, 5, 4}})
	assert.NotContains(t, classes(v), "one-decision/resume-differs-from-plan")
	assert.NotContains(t, classes(v), "work-items/item-twice")
	assert.Contains(t, classes(v), "precise/boundary-earlier", "the start is earlier than cp1 and nothing explains it")
}

// The resume executing a different set of items than the plan lists fails,
// whichever way it differs.
func TestJudgeOneDecisionFailsOnADifferentList(t *testing.T) {
	tr := judgeTruth()
	plan := Decision{Checkpoint: strings.Repeat("a", 40), Skip: []int{1, 2}, Redo: []int{4, 5}, NextSeq: 6, Ran: true}
	for name, ran := range map[string]func(d *Decision){
		"one missing":           func(d *Decision) { d.Executed = []int{4} },
		"one more":              func(d *Decision) { d.Executed = []int{4, 5, 2} },
		"another item":          func(d *Decision) { d.Executed = []int{4, 1} },
		"twice":                 func(d *Decision) { d.Executed = []int{4, 5, 3} },
		"nothing":               func(d *Decision) { d.Executed = nil },
		"unknown seq":           func(d *Decision) { d.Executed = []int{4, 5, 99} },
		"a dispatch unlinked":   func(d *Decision) { d.Executed, d.Unlinked = []int{4, 5}, 1 },
		"refusing plan but ran": func(d *Decision) { d.Executed, d.Refuses = []int{4, 5}, true },
	} {
		d := plan
		ran(&d)
		assert.Contains(t, classes(Judge(tr, d)), "one-decision/resume-differs-from-plan", name)
	}
	// the same items in another order, or a retry's seq for its item, agree
	d := plan
	d.Executed = []int{5, 3}
	assert.NotContains(t, classes(Judge(tr, d)), "one-decision/resume-differs-from-plan")
	d = plan
	d.Executed, d.Refuses = nil, true
	assert.NotContains(t, classes(Judge(tr, d)), "one-decision/resume-differs-from-plan")
}

func TestJudgeSafe(t *testing.T) {
	tr := judgeTruth()
	// nothing to redo: the end, later than cp1, and seq 4's work is not on
	// disk (restoring nothing, it is judged by what it skips)
	v := Judge(tr, Decision{Skip: []int{1, 2, 3, 4, 5}, NextSeq: 6})
	assert.Contains(t, classes(v), "safe/skips-unproven-work")
	// a restore of a checkpoint later than the truth's
	tr0 := judgeTruth()
	tr0.Position = 0
	v = Judge(tr0, Decision{Checkpoint: strings.Repeat("a", 40), Skip: []int{1, 2}, Redo: []int{4, 5}, NextSeq: 6})
	assert.Contains(t, classes(v), "safe/boundary-later")
	// the right boundary, but skipping a commit its own restore undoes
	v = Judge(tr, Decision{Checkpoint: strings.Repeat("a", 40), Skip: []int{1, 2, 3}, Redo: []int{4, 5}, NextSeq: 6})
	assert.Contains(t, classes(v), "safe/skips-undone-work")
	// the right boundary, the in-flight item neither skipped nor redone
	v = Judge(tr, Decision{Checkpoint: strings.Repeat("a", 40), Skip: []int{1, 2}, Redo: []int{5}, NextSeq: 6})
	assert.Contains(t, classes(v), "safe/drops-unfinished-item")
}

// A resume that restores nothing but skips work sits at the boundary before the
// first work it redoes, later than the truth when that checkpoint is not
// there; restoring nothing, it undoes nothing, so it keeps the work on disk
// (done again on the unrestored tree it would be done twice) and is judged by
// what it skips: work not on disk is unsafe.
func TestJudgeNoCheckpointWithSkips(t *testing.T) {
	tr := judgeTruth()
	tr.Boundaries[1].Exists, tr.Boundaries[1].Hash, tr.Position = false, "", 0
	v := Judge(tr, Decision{Skip: []int{1, 2}, Redo: []int{4, 5}, NextSeq: 6})
	assert.Equal(t, 1, v.Position)
	assert.NotContains(t, classes(v), "safe/boundary-later")
	assert.NotContains(t, classes(v), "safe/skips-undone-work")
	v = Judge(tr, Decision{Skip: []int{1, 2, 4}, Redo: []int{5}, NextSeq: 6})
	assert.Contains(t, classes(v), "safe/skips-unproven-work")
}

func TestJudgeWorkItems(t *testing.T) {
	tr := judgeTruth()
	cp := strings.Repeat("a", 40)
	assert.Contains(t, classes(Judge(tr, Decision{Checkpoint: cp, Redo: []int{3, 4, 5}, NextSeq: 6})), "work-items/item-twice")
	assert.Contains(t, classes(Judge(tr, Decision{Checkpoint: cp, Redo: []int{2, 4, 5}, NextSeq: 6})), "work-items/extra-work-items")
}

func TestJudgeNextSeq(t *testing.T) {
	tr := judgeTruth()
	cp := strings.Repeat("a", 40)
	assert.Contains(t, classes(Judge(tr, Decision{Checkpoint: cp, Redo: []int{4, 5}, NextSeq: 5})), "no-reuse/next-seq-reused")
	assert.Contains(t, classes(Judge(tr, Decision{Checkpoint: cp, Redo: []int{4, 5}, NextSeq: 7})), "next-seq/next-seq-high")
}

// An earlier boundary is explained only by a failed check on a seq of an
// ambiguity that allows that boundary; a warning naming the seq is not a failed
// check.
func TestJudgeExplainedNeedsANamedFailedCheckOnTheAmbiguity(t *testing.T) {
	tr := judgeTruth()
	tr.Ambiguities = []Ambiguity{{Check: AmbEmptyOutput, Seqs: []int{2}, Positions: []int{0}}}
	start := Decision{Redo: []int{1, 2, 4, 5}, NextSeq: 6}
	d := start
	d.Failed = []Failed{{Seq: 2, Check: "output file or receipt", Line: "seq 2 investigator: output file or receipt failed: empty"}}
	v := Judge(tr, d)
	assert.True(t, v.Explained)
	assert.Empty(t, classes(v))
	d = start
	d.Failed = []Failed{{Seq: 1, Check: "output file or receipt"}}
	assert.Contains(t, classes(Judge(tr, d)), "precise/verification-fallback", "a failed check on another seq")
	d = start
	d.Notes = []string{"seq 2 investigator: something about seq 2"}
	assert.Contains(t, classes(Judge(tr, d)), "precise/boundary-earlier", "a warning is not a failed check")
	// the ambiguity allows only the start
	tr.Ambiguities[0].Positions = []int{1}
	d = start
	d.Failed = []Failed{{Seq: 2, Check: "output file or receipt"}}
	require.False(t, Judge(tr, d).Explained)
}

// Two boundaries with no dispatch between them are one restart place.
func TestTruthSame(t *testing.T) {
	tr := judgeTruth()
	assert.False(t, tr.Same(0, 1))
	assert.False(t, tr.Same(1, 2))
	assert.True(t, tr.Same(1, 1))
	tr.Seqs = map[int]SeqTruth{1: {Segment: 0}}
	assert.True(t, tr.Same(1, 2), "nothing after cp1: restoring it is the end")
}
