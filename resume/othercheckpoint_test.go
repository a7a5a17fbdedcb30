package resume

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// twoSessionAudit lays out, under a fresh directory, an audit run (a skill
// with no profile: phases named by words, boundaries from the checkpoints)
// and a /debugging run of the same project that started during it, as the
// crash simulator's seed 7532 left them: the audit's scanners seq 1 (failed)
// and seq 2 (completed) and seq 3, whose agent wrote its whole output but
// whose completion line the crash lost; the debugging run's checkpoint,
// taken with source cpSource in the shared shadow repository after those
// three started; then seq 4, the retry of seq 1, dispatched and completed.
// It returns the loaded audit run and the clock.
func twoSessionAudit(t *testing.T, cpSource string) (*pipeline.Pipeline, time.Time) {
	t.Helper()
	root := t.TempDir()
	home, tmp, sysTmp, project := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "systmp"), filepath.Join(root, "project")
	for _, d := range []string{home, tmp, sysTmp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	repo, err := fixture.SmallProject(project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	scratch := paths.ScratchDir(home, project)
	require.NoError(t, os.MkdirAll(scratch, 0o755))

	t0 := time.Date(2026, 8, 27, 21, 2, 26, 0, time.UTC)
	audit, debug := fmt.Sprint(t0.Unix()), fmt.Sprint(t0.Add(14*time.Second).Unix())
	session := func(sid, skill string, files map[int][3]string, times map[int]time.Time, lines []string) string {
		dir := paths.LiveDispatchDir(tmp, sid)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for seq, f := range files { // role, phase, context
			h := manifest.DispatchHeader{Template: f[0], Pipeline: skill, Phase: f[1], Task: "null", Timestamp: times[seq], DispatchDir: dir + "/"}
			body := fmt.Sprintf("You are the %s. Write your findings to %d-%s-output.md beside this dispatch file.\n\n## Context\n%s\n", f[0], seq, f[0], f[2])
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s.md", seq, f[0])), manifest.FormatDispatchFile(h, []byte(body)), 0o644))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(scratch, manifest.DispatchActivePrefix+sid), []byte("dispatch-dir: "+dir+"/\nseq: 0\n"), 0o644))
		return dir
	}
	line := func(seq int, role, phase, status string, dur int, summary string) string {
		if status == "dispatched" {
			return fmt.Sprintf(`{"seq":%d,"file":"%d-%s.md","role":"%s","phase":"%s","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":376,"output_chars":null,"model_tier":"sonnet","tool_calls":null}`, seq, seq, role, role, phase)
		}
		return fmt.Sprintf(`{"seq":%d,"file":"%d-%s.md","role":"%s","phase":"%s","task":null,"status":"%s","duration_s":%d,"summary":"%s","input_chars":376,"output_chars":900,"model_tier":"sonnet","tool_calls":4}`, seq, seq, role, role, phase, status, dur, summary)
	}
	scan := [4]string{"Scan the ledger package for injection bugs.", "Scan the exports package for injection bugs.", "Scan the search package for injection bugs.", "Scan the ledger package for injection bugs."}
	dd := session(audit, "audit",
		map[int][3]string{1: {"scanner", "scan", scan[0]}, 2: {"scanner", "scan", scan[1]}, 3: {"scanner", "scan", scan[2]}, 4: {"scanner", "scan", scan[3]}},
		map[int]time.Time{1: t0.Add(2 * time.Second), 2: t0.Add(3 * time.Second), 3: t0.Add(4 * time.Second), 4: t0.Add(172 * time.Second)},
		[]string{
			line(1, "scanner", "scan", "dispatched", 0, ""), line(2, "scanner", "scan", "dispatched", 0, ""), line(3, "scanner", "scan", "dispatched", 0, ""),
			line(1, "scanner", "scan", "failed", 130, "tests still failing after 3 attempts"),
			line(4, "scanner", "scan", "dispatched", 0, ""), line(4, "scanner", "scan", "completed", 107, "ledger scanned"),
			line(2, "scanner", "scan", "completed", 347, "exports scanned"),
		})
	for seq, what := range map[int]string{2: scan[1], 3: scan[2], 4: scan[3]} {
		out := fmt.Sprintf("# scanner output\n\nverdict: PASS\n%s\nEND\n", what)
		require.NoError(t, os.WriteFile(filepath.Join(dd, fmt.Sprintf("%d-scanner-output.md", seq)), []byte(out), 0o644))
	}
	session(debug, "debugging",
		map[int][3]string{1: {"investigator", "1", "Error analysis: the exporter drops the last row."}, 2: {"implementer", "4", "Fix cycle 1: fix the root cause of the exporter dropping the last row."}},
		map[int]time.Time{1: t0.Add(15 * time.Second), 2: t0.Add(181 * time.Second)},
		[]string{line(1, "investigator", "1", "dispatched", 0, ""), line(1, "investigator", "1", "completed", 20, "investigated"), line(2, "implementer", "4", "dispatched", 0, "")})
	marker, err := json.Marshal(map[string]string{"pipeline_id": audit, "skill": "audit", "phase": "scan", "start_time": t0.Format(time.RFC3339),
		"scratch_dir": scratch, "dispatch_dir": dd + "/", "branch": "feat/login", "baseline_sha": head.Hash().String()})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(scratch, manifest.MarkerFile), marker, 0o644))

	// the debugging run's checkpoint before its fix cycle, in the one shadow
	// repository, after the audit's seqs 1-3 started and before seq 4
	shadowDir := paths.ShadowDir(home, project)
	require.NoError(t, os.MkdirAll(shadowDir, 0o755))
	shadow, err := checkpoint.ProveShadowDir(shadowDir)
	require.NoError(t, err)
	st, err := checkpoint.OpenOrInit(shadow, project)
	require.NoError(t, err)
	_, _, err = st.Create(checkpoint.CreateOptions{Reason: "pre-debug-fix-cycle-1", Source: cpSource, Now: func() time.Time { return t0.Add(127 * time.Second) }})
	require.NoError(t, err)

	pl, err := pipeline.Load(pipeline.Options{Path: scratch, Home: home, Tmp: tmp, SysTmp: sysTmp, Cwd: project})
	require.NoError(t, err)
	return pl, t0.Add(time.Hour)
}

// Two live sessions in one scratch dir share one shadow repository (issue 36
// symptom 5; crash simulator seed 7532): the /debugging run's checkpoint,
// taken during the audit run's scan phase, was one of the audit's boundaries
// (its generic profile takes the reasons of the checkpoints present), so the
// retry dispatched after it made the audit's pipeline look "moved past" seq
// 3, whose completion line the crash lost: seq 3 was taken as completed and
// skipped, work the latest provable boundary needs redone. A checkpoint whose
// source is another session's skill and not this run's is that session's:
// it proves no boundary of this run.
func TestOtherSessionsCheckpointIsNoBoundaryOfThisRun(t *testing.T) {
	t.Parallel()
	pl, now := twoSessionAudit(t, "debugging")
	for _, cp := range pl.Checkpoints {
		assert.NotEqual(t, "pre-debug-fix-cycle-1", cp.Reason, "the debugging run's checkpoint is not a candidate of the audit run")
	}
	foreign := false
	for _, cp := range pl.ForeignCheckpoints {
		foreign = foreign || cp.Reason == "pre-debug-fix-cycle-1"
	}
	assert.True(t, foreign, "the debugging run's checkpoint is another run's")
	assert.Contains(t, strings.Join(pl.Warnings, "\n"), "checkpoints of another session of this project are not candidates")
	a, err := Decide(pl, "", 0, now)
	require.NoError(t, err)
	assert.Contains(t, seqs(a.Redo), 3, "seq 3 never completed: redone (skip %v, warnings %v)", seqs(a.Skip), a.Warnings)
	assert.NotContains(t, seqs(a.Skip), 3)
	assert.Nil(t, a.Checkpoint, "the other session's checkpoint is never restored")

	// the same checkpoint taken by this run's own skill stays its candidate
	pl, _ = twoSessionAudit(t, "audit")
	found := false
	for _, cp := range pl.Checkpoints {
		found = found || cp.Reason == "pre-debug-fix-cycle-1"
	}
	assert.True(t, found, "a checkpoint of this run's skill is its own")
	assert.NotContains(t, strings.Join(pl.Warnings, "\n"), "another session of this project")
}
