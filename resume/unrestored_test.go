package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// unrestoredRun is a /build run with no checkpoint before its crash: the
// first design dispatch (task-less, its dispatch file gone, so nothing says
// the next one redid its work) failed, the second completed, the plan writer
// committed, the plan reviewer completed, and wave 1's implementer was in
// flight. The resume point is the start of the pipeline, where nothing
// restores the tree.
func unrestoredRun() ([]*pipeline.Dispatch, fakeLog, time.Time) {
	t0 := time.Date(2026, 4, 9, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	dur := func(m int) *float64 { f := float64(m * 60); return &f }
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "innovate", Phase: "1", Recorded: true, Status: manifest.StatusFailed, DurationS: dur(1), Class: templates.RoleNonArtifact},
		{Seq: 2, Role: "innovate", Phase: "1", Time: at(2), DurationS: dur(3), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact},
		{Seq: 3, Role: "plan-writer", Phase: "2", Time: at(6), DurationS: dur(6), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating},
		{Seq: 4, Role: "plan-reviewer", Phase: "2", Time: at(13), DurationS: dur(1), Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleNonArtifact},
		{Seq: 5, Role: "build-implementer", Phase: "3", Task: intp(1), Time: at(20), Recorded: true, Status: manifest.StatusDispatched, Class: templates.RoleMutating},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: at(10), Message: "docs(plan-writer): write the implementation plan"}}
	return ds, log, at(60)
}

// Without a restore nothing undoes the work of the completed dispatches after
// the resume point: re-executing them would do their work twice (the plan
// writer's commit made again on top of itself; seeds 2593, 3227 and 3457 of
// the crash simulator). Only the work not on disk is re-executed: the failed
// dispatch and the one in flight. A commit that is not on the branch any more
// is not kept. An override re-executes as asked.
func TestNoRestoreKeepsCompletedWorkOnDisk(t *testing.T) {
	t.Parallel()
	ds, log, now := unrestoredRun()
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: log, Now: now})
	require.NoError(t, err)
	require.True(t, a.Resume.Start, "resumes at %s", a.Resume.Label())
	require.Nil(t, a.Checkpoint)
	require.Equal(t, "[1 5]", fmt.Sprint(seqs(WorkItems(a))), "the work items re-executed")
	require.Equal(t, "[2 3 4]", fmt.Sprint(seqs(a.Kept)), "the completed work kept on disk")
	require.Equal(t, "[2 3 4]", fmt.Sprint(seqs(a.Skip)))
	require.Contains(t, strings.Join(a.Warnings, "\n"), "is kept, not re-executed")

	// the plan writer's commit is gone from the branch: its work is redone
	ds, _, now = unrestoredRun()
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: fakeLog{}, Now: now})
	require.NoError(t, err)
	require.Equal(t, "[1 3 5]", fmt.Sprint(seqs(WorkItems(a))))

	// --from-phase 1 asks for everything again
	ds, log, now = unrestoredRun()
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: log, Now: now, FromPhase: "1"})
	require.NoError(t, err)
	require.Equal(t, "[1 2 3 4 5]", fmt.Sprint(seqs(WorkItems(a))))
	require.Empty(t, a.Kept)
}

// With a checkpoint the restore undoes the completed work after it, so all of
// it is re-executed: the rule above keeps nothing then.
func TestRestoreReexecutesCompletedWorkAfterIt(t *testing.T) {
	t.Parallel()
	ds, log, now := unrestoredRun()
	ds[0].Status, ds[0].Time = manifest.StatusCompleted, now.Add(-59*time.Minute)
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: now.Add(-41 * time.Minute)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-design-gate", Time: now.Add(-55 * time.Minute)}}
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: now})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	require.Empty(t, a.Kept)
}

// A resume that keeps the disk state (nothing to restore) and re-executes
// work takes a pre-restore-safety checkpoint of the whole tree first: the
// re-executed agents write over what the crashed attempts left (a
// half-written file), which no restore's safety checkpoint keeps then
// (crash simulator seed 3457: units/g04-t1.partial as it was at the crash
// was in no tree). Nothing in the tree changes.
func TestKeptDiskStateTakesASafetyCheckpoint(t *testing.T) {
	t.Parallel()
	p := build(t)
	pl, a := decideFixture(t, p)
	require.NotEmpty(t, a.Items)
	a.Checkpoint, a.NoCheckpoint = nil, true // no checkpoint for the resume point
	partial := filepath.Join(p.Project, "half-written.partial")
	require.NoError(t, os.WriteFile(partial, []byte("a crashed attempt's work\n"), 0o644))
	before := digest(t, p.Project)
	var log strings.Builder
	res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Session: "1775442000", Log: &log})
	require.NoError(t, err)
	require.True(t, res.KeptDiskState)
	require.NotNil(t, res.Safety)
	assert.Equal(t, checkpoint.SafetyReason, res.Safety.Reason)
	assert.Contains(t, log.String(), "replay checkpoint restore "+res.Safety.Short)
	assert.Equal(t, before, digest(t, p.Project), "nothing in the tree changed")

	shadow, err := git.PlainOpen(pl.ShadowDir)
	require.NoError(t, err)
	tree, err := shadow.TreeObject(res.Safety.Tree)
	require.NoError(t, err)
	f, err := tree.File("half-written.partial")
	require.NoError(t, err, "the safety checkpoint holds the crashed attempt's file")
	body, err := f.Contents()
	require.NoError(t, err)
	assert.Equal(t, "a crashed attempt's work\n", body)
}

// An attempt in flight when nothing restores the tree (crash simulator seeds
// 3453, 5471, 7192, 7305: an audit resumed from the start of the pipeline)
// left its work in the tree: a partial commit, a half-written file. Its
// re-executed attempt worked on top of it (the unit done twice, or on the
// wrong base). The resume undoes it: Undo names the attempt and the commits
// made since it started, each provably work the resume re-executes; a
// completed item whose commit lies above the partial one is re-executed with
// it, no longer kept. A commit that is not such work (naming another task,
// no dispatch claiming it) leaves the tree as it is, with a warning.
func TestNoRestoreUndoesAnInFlightAttemptsWork(t *testing.T) {
	t.Parallel()
	ds, log, now := unrestoredRun()
	t1 := strings.Repeat("b", 40)
	log = append(fakeLog{{Hash: t1, Time: ds[4].Time.Add(time.Minute), Message: "feat: task 1 half of the login form"}}, log...)
	a, err := Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: log, Now: now})
	require.NoError(t, err)
	require.NotNil(t, a.Undo, "%v", a.Warnings)
	assert.Equal(t, "[5]", fmt.Sprint(seqs(a.Undo.Attempts)))
	require.Len(t, a.Undo.Above, 1)
	assert.Equal(t, t1, a.Undo.Above[0].Hash)
	require.Len(t, a.Partial, 1)
	assert.Equal(t, 5, a.Partial[0].Dispatch.Seq)
	assert.Equal(t, "[1 5]", fmt.Sprint(seqs(WorkItems(a))))
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "the resume restores the project's commit from before they started")

	// a completed implementer of the wave committed after it: re-executed too
	ds, _, now = unrestoredRun()
	t2 := strings.Repeat("c", 40)
	ds = append(ds, &pipeline.Dispatch{Seq: 6, Role: "build-implementer", Phase: "3", Task: intp(2), Time: ds[4].Time, Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleMutating})
	withT2 := append(fakeLog{{Hash: t2, Time: ds[4].Time.Add(2 * time.Minute), Message: "feat: task 2 the session store"}}, log...)
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: withT2, Now: now})
	require.NoError(t, err)
	require.NotNil(t, a.Undo, "%v", a.Warnings)
	assert.Len(t, a.Undo.Above, 2)
	assert.Equal(t, "[1 5 6]", fmt.Sprint(seqs(WorkItems(a))), "the completed implementer above the partial commit is re-executed")
	assert.Equal(t, "[2 3 4]", fmt.Sprint(seqs(a.Kept)))
	// the plan names why it is redone, on that dispatch (crash simulator
	// seeds 3041, 5471: the plan said nothing)
	require.Len(t, FailureLines(a), 1)
	assert.Equal(t, "seq 6 build-implementer: kept across the undo failed: its commit ccccccc \"feat: task 2 the session store\" was made after seq 5 (build-implementer), which never completed, started in the same tree: the undo of that attempt's work takes it back (it may hold some of it), so the item is re-executed", FailureLines(a)[0])

	// a commit since then that is no work the resume re-executes: nothing undone
	ds, _, now = unrestoredRun()
	other := append(fakeLog{{Hash: t2, Time: ds[4].Time.Add(2 * time.Minute), Message: "feat: task 7 the audit trail"}}, log...)
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Log: other, Now: now})
	require.NoError(t, err)
	assert.Nil(t, a.Undo)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "is not the work of an attempt the resume re-executes: the tree is kept as it is")

	// a checkpoint restores the tree: no Undo (the restore undoes it)
	ds, _, now = unrestoredRun()
	ds[0].Status, ds[0].Time = manifest.StatusCompleted, now.Add(-59*time.Minute)
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("1", 40), Short: "11111111", Reason: "pre-wave-1", Time: now.Add(-41 * time.Minute)},
		{Hash: strings.Repeat("2", 40), Short: "22222222", Reason: "pre-design-gate", Time: now.Add(-55 * time.Minute)}}
	a, err = Analyze(Input{Profile: testProfile(t), Dispatches: ds, Checkpoints: cps, Log: log, Now: now})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	assert.Nil(t, a.Undo)
	require.Len(t, a.Partial, 1, "the restore undoes the partial commit")
}

// Through Run: a run whose shadow repository holds no checkpoint of it (one
// taken by hand only) resumes at wave 2 on the current disk state, and its
// task-3 implementer left a partial commit: the resume restores the commit
// before it, behind a pre-restore-safety checkpoint and the pre-restore ref
// (the undo printed), and the partial commit stays reachable from the ref.
// Without a shadow repository nothing can keep the tree: it is kept as is.
func TestRunUndoesAPartialCommitWithNoCheckpointToRestore(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.NoShadowRepo)
	_, a := decideFixture(t, p)
	require.Nil(t, a.Undo, "no shadow repository: nothing undone")
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "no shadow repository to keep the tree in")

	shadow, err := checkpoint.ProveShadowDir(p.Shadow)
	require.NoError(t, err)
	st, err := checkpoint.OpenOrInit(shadow, p.Project)
	require.NoError(t, err)
	_, _, err = st.Create(checkpoint.CreateOptions{Reason: "before-resume", Source: "user", Now: func() time.Time { return p.Now }})
	require.NoError(t, err)
	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	partial, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)

	_, a = decideFixture(t, p)
	require.True(t, a.NoCheckpoint)
	require.NotNil(t, a.Undo, "%v", a.Warnings)
	require.Len(t, a.Partial, 1)
	assert.Equal(t, partial.Hash.String(), a.Partial[0].Commit.Hash)
	// the plan says the undo needs --yes where no terminal can ask
	pf := RunPreflight(a, PreflightOptions{Confirm: true})
	assert.Contains(t, strings.Join(pf.Lines, "\n"), "that needs --yes")
	pf = RunPreflight(a, PreflightOptions{Confirm: true, Yes: true})
	assert.NotContains(t, strings.Join(pf.Lines, "\n"), "that needs --yes")
	_, err = Run(a, RunOptions{Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Session: "1775441999"})
	require.Error(t, err, "no terminal and no --yes: the undo is refused")
	assert.Equal(t, head.Hash(), mustHead(t, repo), "nothing changed")

	var log strings.Builder
	res, err := Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Session: "1775442000", Log: &log})
	require.NoError(t, err)
	require.NotNil(t, res.Restore)
	assert.False(t, res.KeptDiskState)
	now, err := repo.Head()
	require.NoError(t, err)
	assert.Equal(t, partial.ParentHashes[0], now.Hash(), "the branch is back before the partial commit")
	ref, err := repo.Reference(plumbing.ReferenceName(checkpoint.PreRestoreRefPrefix+"1775442000"), false)
	require.NoError(t, err)
	assert.Equal(t, partial.Hash, ref.Hash(), "the partial commit is kept by the pre-restore ref")
	require.NotNil(t, res.Restore.Safety)
	assert.Contains(t, log.String(), res.Restore.UndoCommand)
	assert.Contains(t, log.String(), "from before seq 19")
}

func mustHead(t *testing.T, repo *git.Repository) plumbing.Hash {
	t.Helper()
	h, err := repo.Head()
	require.NoError(t, err)
	return h.Hash()
}
