package resume

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/templates"
)

// Task-less commit messages (as Crucible's implementer prompt writes them) are
// attributed one-to-one by the words they share with each task's context.
func TestTasklessCommitsAttributedByWords(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.TasklessCommits)
	_, a := decideFixture(t, p)
	assert.Empty(t, a.Failures)
	assert.Equal(t, 2, a.Resume.Wave)
	plan := BuildPlan(a, nil)
	assert.Contains(t, plan.CrashedAt, "Phase 3 (Execute) wave 2")
	require.Len(t, a.Partial, 1, "the task-less partial commit of seq 19 is still found")
	assert.Equal(t, p.Commits["task3-partial"].String(), a.Partial[0].Commit.Hash)

	byseq := map[int]Check{}
	for _, c := range a.Checks {
		if c.Seq > 0 && strings.HasPrefix(c.Boundary, "Mid-Phase 3 (wave 2)") {
			byseq[c.Seq] = c
		}
	}
	assert.Contains(t, byseq[11].Detail, short(p.Commits["task1-impl"].String()))
	assert.Contains(t, byseq[11].Detail, "shares words with its task: form, login, validation")
	assert.Contains(t, byseq[12].Detail, short(p.Commits["task2-impl"].String()))
	assert.Contains(t, byseq[14].Detail, short(p.Commits["task2-cleanup"].String()))
	var explain bytes.Buffer
	require.NoError(t, report.WriteExplainAs(&explain, ExplainRows(a), report.TableStyle{}))
	assert.Regexp(t, `\| 11 +\| build-implementer +\| commit in window attributed to task 1 \| ok +\| [0-9a-f]{7} "feat: implement login form validation"`, explain.String())
}

// Two dispatches in flight with one commit in their shared window: the commit
// counts for one of them only.
func TestAttributionIsOneToOne(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	dur := 600.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "implementer", Task: &one, Time: t0, DurationS: &dur, Recorded: true, Class: "mutating", Status: "completed"},
		{Seq: 2, Role: "implementer", Task: &two, Time: t0.Add(5 * time.Second), DurationS: &dur, Recorded: true, Class: "mutating", Status: "completed"},
	}
	log := fakeLog{{Hash: strings.Repeat("a", 40), Time: t0.Add(time.Minute), Message: "feat: implement charge model"}}
	p := testProfile(t)
	v := &verifier{profile: p, log: log, cache: map[int]Verdict{}, dispatches: ds}
	got1, got2 := v.verify(ds[0]), v.verify(ds[1])
	assert.False(t, got1.OK || got2.OK, "one commit with no task or words for two dispatches proves neither")
	assert.Contains(t, got1.Detail, "1 commit in 2026-04-06 09:59:30Z..2026-04-06 10:10:30Z for 2 mutating dispatches in flight")

	// The commit names task 1: it goes to seq 1 and cannot count for seq 2 too.
	log[0].Message = "feat: task 1 charge model"
	v = &verifier{profile: p, log: log, cache: map[int]Verdict{}, dispatches: ds}
	got1, got2 = v.verify(ds[0]), v.verify(ds[1])
	assert.True(t, got1.OK, got1.Detail)
	assert.False(t, got2.OK)
	assert.Contains(t, got2.Detail, "aaaaaaa went to seq 1")

	// A second commit in the window: each dispatch gets one, whichever way the
	// commits are shared out.
	log[0].Message = "feat: implement charge model"
	log = append(log, pipeline.Commit{Hash: strings.Repeat("b", 40), Time: t0.Add(2 * time.Minute), Message: "feat: wire the webhook"})
	v = &verifier{profile: p, log: log, cache: map[int]Verdict{}, dispatches: ds}
	got1, got2 = v.verify(ds[0]), v.verify(ds[1])
	assert.True(t, got1.OK, got1.Detail)
	assert.True(t, got2.OK, got2.Detail)
	assert.Contains(t, got1.Detail, "every one-to-one matching of them gives it one")

	// The task number beats order: the commit naming task 2 goes to seq 2.
	log = fakeLog{
		{Hash: strings.Repeat("c", 40), Time: t0.Add(time.Minute), Message: "feat: task 2 webhook"},
		{Hash: strings.Repeat("d", 40), Time: t0.Add(2 * time.Minute), Message: "feat: charge model"},
	}
	v = &verifier{profile: p, log: log, cache: map[int]Verdict{}, dispatches: ds}
	assert.Contains(t, v.verify(ds[1]).Detail, "names task 2")
	assert.Contains(t, v.verify(ds[0]).Detail, "dddddd")
}

// fakeLog is a CommitLog over a fixed list of commits.
type fakeLog []pipeline.Commit

func (f fakeLog) Between(start, end time.Time) ([]pipeline.Commit, error) {
	var out []pipeline.Commit
	for i := len(f) - 1; i >= 0; i-- { // newest first
		if c := f[i]; !c.Time.Before(start) && !c.Time.After(end) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Checkpoint subjects in local wall-clock time on a UTC+2 machine: the shadow
// commit's zoned time places the waves, not the subject read as UTC.
func TestLocalTimeCheckpoints(t *testing.T) {
	saved := time.Local
	time.Local = fixture.UTCPlus2
	t.Cleanup(func() { time.Local = saved })

	p := build(t, fixture.LocalTimeUTCPlus2)
	_, a := decideFixture(t, p)
	assert.Equal(t, 2, a.Resume.Wave)
	assert.Equal(t, []int{19}, seqs(a.Redo))
	require.NotNil(t, a.Checkpoint)
	assert.True(t, a.Checkpoint.Time.Equal(p.Checkpoints[6].Time), "checkpoint time %s, want %s", a.Checkpoint.Time, p.Checkpoints[6].Time)
	assert.NotContains(t, strings.Join(Warnings(a), "\n"), "differs from the shadow commit's time", "subject read as local time agrees")

	// Read in the wrong zone (UTC), the subjects disagree by two hours: warned,
	// and the commit time still decides.
	time.Local = time.UTC
	_, a = decideFixture(t, p)
	assert.Equal(t, 2, a.Resume.Wave)
	assert.Contains(t, strings.Join(Warnings(a), "\n"), "differs from the shadow commit's time")
	assert.Contains(t, strings.Join(Warnings(a), "\n"), "by 2h0m0s")
}

// The build-mode file is read from the system temporary root before $TMPDIR.
func TestBuildModeFromSystemTmp(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.BuildModeInSystemTmp)
	_, a := decideFixture(t, p)
	st := Reconstruct(a, p.Tmp, plumbing.ZeroHash)
	assert.Equal(t, "feature", st.Mode)
	assert.Equal(t, p.Commits["init"].String(), st.Baseline)
	for _, w := range st.Warnings {
		assert.NotContains(t, w, "build-mode file")
	}
	// Gone from both roots: the warning names both places.
	require.NoError(t, os.Remove(p.BuildModeFile))
	st = Reconstruct(a, p.Tmp, plumbing.ZeroHash)
	assert.Contains(t, strings.Join(st.Warnings, "\n"), filepath.Join(p.SysTmp, "crucible-build-mode.md")+" or "+filepath.Join(p.Tmp, "crucible-build-mode.md"))
}

func testProfile(t *testing.T) *templates.Profile {
	t.Helper()
	p, err := templates.Load("build")
	require.NoError(t, err)
	return p
}

// No checkpoint: the menu offers the disk state, a fresh start and abort, with
// abort as the default; a fresh start archives the markers and deletes nothing.
func TestNoCheckpointMenu(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.NoShadowRepo)
	pl, a := decideFixture(t, p)
	require.True(t, a.NoCheckpoint)
	clock := func() time.Time { return p.Now }

	pr := &prompt.Scripted{Selects: []int{2}}
	_, err := Run(a, RunOptions{Prompter: pr, Now: clock, Tmp: p.Tmp})
	assert.ErrorIs(t, err, ErrNotConfirmed, "abort")
	assert.Equal(t, []int{2}, pr.Defaults, "the cursor starts on abort")
	assert.FileExists(t, filepath.Join(p.Scratch, ".pipeline-active"))

	before := digest(t, p.Project)
	pr = &prompt.Scripted{Selects: []int{1}}
	res, err := Run(a, RunOptions{Prompter: pr, Now: clock, Tmp: p.Tmp, Session: "1775441000"})
	require.NoError(t, err)
	assert.True(t, res.StartedFresh)
	marker := filepath.Join(p.Scratch, ".pipeline-active")
	active := filepath.Join(p.Scratch, ".dispatch-active-"+p.SessionID)
	assert.Equal(t, [][2]string{{marker, marker + ".archived-1775441000"}, {active, active + ".archived-1775441000"}}, res.Archived)
	assert.NoFileExists(t, marker)
	assert.FileExists(t, marker+".archived-1775441000")
	assert.FileExists(t, active+".archived-1775441000")
	assert.Equal(t, before, digest(t, p.Project), "the working tree is untouched")
	assert.FileExists(t, p.ManifestPath)

	// The archived markers no longer make the pipeline count as left behind, and a
	// second fresh start under the same session refuses to overwrite them.
	sids, err := manifest.ReadDispatchActive(p.Scratch)
	require.NoError(t, err)
	assert.Empty(t, sids)
	require.NoError(t, os.WriteFile(marker, []byte("{}"), 0o644))
	_, err = ArchiveMarkers(pl, "1775441000")
	assert.ErrorContains(t, err, "exists already")
	assert.FileExists(t, marker, "nothing renamed")

	// Non-interactive stays as before: no TTY and no --yes refuses (exit 3).
	_, err = Run(a, RunOptions{Now: clock, Tmp: p.Tmp})
	assert.ErrorIs(t, err, ErrNotConfirmed)
}

func digest(t *testing.T, root string) string {
	t.Helper()
	d, err := fixture.Digest(root)
	require.NoError(t, err)
	return d
}

// The checks a run makes before writing anything, through the package API.
func TestRunPreflight(t *testing.T) {
	t.Parallel()
	p := build(t)
	_, a := decideFixture(t, p)

	pf := RunPreflight(a, PreflightOptions{Redispatch: true})
	require.NoError(t, pf.Err)
	assert.Empty(t, pf.Lines, "nothing to check: no flags, every dispatch file present")

	pf = RunPreflight(a, PreflightOptions{Templates: filepath.Join(p.Root, "nope"), TemplateRef: "main"})
	assert.ErrorIs(t, pf.Err, ErrBadInput)
	assert.Contains(t, pf.Lines[0], "FAIL: --templates "+filepath.Join(p.Root, "nope")+": not a directory")

	pf = RunPreflight(a, PreflightOptions{TemplateRef: "main"})
	assert.ErrorIs(t, pf.Err, ErrBadInput, "--template-ref needs --templates")

	pf = RunPreflight(a, PreflightOptions{Templates: p.Templates, TemplateRef: "main"})
	assert.ErrorIs(t, pf.Err, ErrBadInput, "the template folder is not in a git repository")
	assert.Contains(t, strings.Join(pf.Lines, "\n"), "FAIL: --template-ref main")

	// A template changed after the original run: the seed's staleness warning.
	tmpl := filepath.Join(p.Templates, "build-implementer-prompt.md")
	require.NoError(t, os.Chtimes(tmpl, p.Now, p.Now))
	pf = RunPreflight(a, PreflightOptions{Templates: p.Templates})
	require.NoError(t, pf.Err)
	assert.Contains(t, pf.Lines, "Warning: Template build-implementer-prompt.md was modified after the original pipeline run. A/B comparison may be confounded by template changes unrelated to the mutation.")

	// Seq 19's dispatch file is gone: a re-dispatch without templates fails first.
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		require.NoError(t, os.Remove(filepath.Join(dir, "19-build-implementer.md")))
	}
	_, a = decideFixture(t, p)
	pf = RunPreflight(a, PreflightOptions{Redispatch: true})
	assert.Error(t, pf.Err)
	assert.NotErrorIs(t, pf.Err, ErrBadInput)
	assert.ErrorContains(t, pf.Err, "nothing was changed")
	pf = RunPreflight(a, PreflightOptions{})
	require.NoError(t, pf.Err, "a hand-off does not re-dispatch: only a warning")
	assert.Contains(t, pf.Lines[0], "warning: seq 19 (build-implementer): its dispatch file 19-build-implementer.md is gone")
	pf = RunPreflight(a, PreflightOptions{Redispatch: true, Templates: p.Templates})
	require.NoError(t, pf.Err)
	assert.Contains(t, strings.Join(pf.Lines, "\n"), "seq 19 (build-implementer): dispatch file gone; it will be rebuilt from the template")
}

func TestMissingGateCheckpointWarns(t *testing.T) {
	t.Parallel()
	p := testProfile(t)
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	dur := 300.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "code-reviewer", Phase: "4", Time: t0, DurationS: &dur, Recorded: true, Class: p.ClassOf("code-reviewer"), Status: "completed"},
		{Seq: 2, Role: "inquisitor", Phase: "4", Time: t0.Add(10 * time.Minute), DurationS: &dur, Recorded: true, Class: p.ClassOf("inquisitor"), Status: "completed"},
		{Seq: 3, Role: "quality-gate", Phase: "4", Time: t0.Add(20 * time.Minute), Recorded: true, Class: p.ClassOf("quality-gate"), Status: "dispatched"},
	}
	cps := []pipeline.CheckpointRef{{Hash: strings.Repeat("c", 40), Short: "cccccccc", Reason: "pre-code-review", Time: t0.Add(-time.Minute)}}
	ev := pipeline.Evidence{Outputs: map[int][]string{1: {"1-code-reviewer-findings.md"}, 2: {"2-inquisitor-findings.md"}}}

	for _, tc := range []struct {
		name    string
		cps     []pipeline.CheckpointRef
		want    string
		warning string
	}{
		{"pre-impl-gate missing", cps, "pre-code-review",
			"Desired checkpoint pre-impl-gate not found. Falling back to pre-code-review. Replaying from Phase 4 instead of Phase 4 (pre-impl-gate)."},
		{"pre-inquisitor kept, pre-impl-gate missing", append(append([]pipeline.CheckpointRef{}, cps...), pipeline.CheckpointRef{Hash: strings.Repeat("d", 40), Short: "dddddddd", Reason: "pre-inquisitor", Time: t0.Add(9 * time.Minute)}), "pre-inquisitor",
			"Desired checkpoint pre-impl-gate not found. Falling back to pre-inquisitor. Replaying from Phase 4 (pre-inquisitor) instead of Phase 4 (pre-impl-gate)."},
	} {
		a, err := Analyze(Input{Profile: p, Dispatches: cloneDispatches(ds), Checkpoints: tc.cps, Evidence: ev, Now: t0.Add(time.Hour)})
		require.NoError(t, err, tc.name)
		require.NotNil(t, a.Checkpoint, tc.name)
		assert.Equal(t, tc.want, a.Checkpoint.Reason, tc.name)
		assert.Contains(t, a.Warnings, tc.warning, tc.name)
	}
}

func cloneDispatches(ds []*pipeline.Dispatch) []*pipeline.Dispatch {
	out := make([]*pipeline.Dispatch, len(ds))
	for i, d := range ds {
		c := *d
		out[i] = &c
	}
	return out
}

// --explain says why the resume fell back from a boundary whose checkpoint is gone.
func TestExplainNamesMissingCheckpoint(t *testing.T) {
	t.Parallel()
	p := build(t, fixture.EvictedPreWave2)
	_, a := decideFixture(t, p)
	var explain bytes.Buffer
	require.NoError(t, report.WriteExplainAs(&explain, ExplainRows(a), report.TableStyle{}))
	assert.Regexp(t, `Mid-Phase 3 \(wave 2\): pre-wave-2 +\| +\| +\| checkpoint +\| FAIL +\| no checkpoint with this reason \(evicted or never taken\); the boundary was placed by`, explain.String())
}

// The plan's quality gate opens with its first red-team (or quality-gate) dispatch
// of phase 2: a missing pre-plan-gate checkpoint falls back with the seed's warning
// too, and a present one is where the resume starts.
func TestMissingPlanGateCheckpointWarns(t *testing.T) {
	t.Parallel()
	p := testProfile(t)
	t0 := time.Date(2026, 4, 6, 10, 0, 0, 0, time.UTC)
	dur := 300.0
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "plan-writer", Phase: "2", Time: t0, DurationS: &dur, Recorded: true, Class: p.ClassOf("plan-writer"), Status: "completed"},
		{Seq: 2, Role: "plan-reviewer", Phase: "2", Time: t0.Add(10 * time.Minute), DurationS: &dur, Recorded: true, Class: p.ClassOf("plan-reviewer"), Status: "completed"},
		{Seq: 3, Role: "red-team", Phase: "2", Time: t0.Add(20 * time.Minute), Recorded: true, Class: p.ClassOf("red-team"), Status: "dispatched"},
	}
	design := pipeline.CheckpointRef{Hash: strings.Repeat("a", 40), Short: "aaaaaaaa", Reason: "pre-design-gate", Time: t0.Add(-time.Minute)}
	gate := pipeline.CheckpointRef{Hash: strings.Repeat("b", 40), Short: "bbbbbbbb", Reason: "pre-plan-gate", Time: t0.Add(19 * time.Minute)}
	ev := pipeline.Evidence{Outputs: map[int][]string{2: {"2-plan-reviewer-findings.md"}}}
	log := fakeLog{{Hash: strings.Repeat("e", 40), Message: "docs: implementation plan", Time: t0.Add(4 * time.Minute)}}

	a, err := Analyze(Input{Profile: p, Dispatches: cloneDispatches(ds), Checkpoints: []pipeline.CheckpointRef{design}, Log: log, Evidence: ev, Now: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	assert.Equal(t, "pre-design-gate", a.Checkpoint.Reason)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "Desired checkpoint pre-plan-gate not found. Falling back to pre-design-gate.")

	a, err = Analyze(Input{Profile: p, Dispatches: cloneDispatches(ds), Checkpoints: []pipeline.CheckpointRef{design, gate}, Log: log, Evidence: ev, Now: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.NotNil(t, a.Checkpoint)
	assert.Equal(t, "pre-plan-gate", a.Checkpoint.Reason)
	assert.NotContains(t, strings.Join(a.Warnings, "\n"), "Falling back")
}
