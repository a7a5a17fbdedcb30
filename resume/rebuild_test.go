package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/templates"
)

// scannerRun is an audit's two parallel task-less scanners (one role and
// phase, told apart by their instructions only); seq 1's dispatch file is
// gone. Seq 1 ends at line end1 (in flight: its dispatched line), seq 2 is
// dispatched at line start2 and ends at end2 (0: in flight).
func scannerRun(t *testing.T, status1 manifest.Status, end1, start2, end2 int) (*Analysis, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scanner-prompt.md"), []byte("You are the scanner.\n"), 0o644))
	s2 := manifest.StatusCompleted
	if end2 == 0 {
		s2, end2 = manifest.StatusDispatched, start2
	}
	ds := []*pipeline.Dispatch{
		{Seq: 1, Role: "scanner", Phase: "scan", File: "1-scanner.md", Template: "scanner", Recorded: true, Status: status1, Class: templates.RoleOutput, Entry: &manifest.Entry{FirstLine: 1, Line: end1}},
		{Seq: 2, Role: "scanner", Phase: "scan", File: "2-scanner.md", Template: "scanner", Recorded: true, Status: s2, Class: templates.RoleOutput, Entry: &manifest.Entry{FirstLine: start2, Line: end2}},
	}
	a := &Analysis{Pipeline: &pipeline.Pipeline{Files: map[int]string{2: filepath.Join(dir, "2-scanner.md")}}, Dispatches: ds, Redo: ds[:1]}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2-scanner.md"), []byte("# Dispatch: scanner\n"), 0o644))
	a.groupItems()
	return a, dir
}

// A dispatch file that is gone is rebuilt from its role's template, which
// does not carry the instructions; when another task-less dispatch of the
// role and phase ran beside it, the rebuilt prompt could be either's work:
// the re-dispatch stops before writing, naming both (crash simulator seeds
// 192, 2843, 3112, 3238: the agent got "scanner, phase scan, no task" and
// could not tell which). A later dispatch that started after it ended may
// be its retry, the same work: it is rebuilt.
func TestRebuildOfParallelTaskLessDispatchIsRefused(t *testing.T) {
	t.Parallel()
	// seq 1 in flight, seq 2 dispatched beside it
	a, dir := scannerRun(t, manifest.StatusDispatched, 1, 2, 0)
	pf := RunPreflight(a, PreflightOptions{Templates: dir, Redispatch: true})
	require.Error(t, pf.Err)
	assert.Contains(t, pf.Err.Error(), "cannot tell which work seq 1 was")
	assert.Contains(t, pf.Err.Error(), "seq 2 of the same role and phase ran beside it")
	assert.NotContains(t, pf.Err.Error(), "\n", "one line")
	// the plan (no re-dispatch) warns
	pf = RunPreflight(a, PreflightOptions{Templates: dir})
	require.NoError(t, pf.Err)
	assert.Contains(t, strings.Join(pf.Lines, "\n"), "warning: seq 1 (scanner, phase scan, no task)")

	// seq 1 failed at line 3, seq 2 dispatched at line 2 before that: beside it
	a, dir = scannerRun(t, manifest.StatusFailed, 3, 2, 4)
	require.Error(t, RunPreflight(a, PreflightOptions{Templates: dir, Redispatch: true}).Err)

	// seq 1 failed at line 2, seq 2 dispatched after (line 3): maybe its retry
	a, dir = scannerRun(t, manifest.StatusFailed, 2, 3, 4)
	pf = RunPreflight(a, PreflightOptions{Templates: dir, Redispatch: true})
	require.NoError(t, pf.Err)
	assert.Contains(t, strings.Join(pf.Lines, "\n"), "seq 1 (scanner): dispatch file gone; it will be rebuilt from the template")

	// a task names the work: rebuilt
	a, dir = scannerRun(t, manifest.StatusDispatched, 1, 2, 0)
	for _, d := range a.Dispatches {
		d.Task = intp(d.Seq)
	}
	require.NoError(t, RunPreflight(a, PreflightOptions{Templates: dir, Redispatch: true}).Err)
}

// Two other task-less dispatches of the role and phase that were given
// different instructions show the role has several units of work in that
// phase: a dispatch whose file is gone and that ran beside neither may be any
// of them (crash simulator seed 3490: a scanner dispatched after one scanner
// completed and another failed). Given the same instructions they are one
// unit of work, and it is rebuilt.
func TestRebuildAmongDifferentlyInstructedSiblingsIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		body2, body3 string
		refused      bool
	}{
		{"different instructions", "Scan the ledger package.", "Scan the billing package.", true},
		{"the same instructions", "Scan the ledger package.", "Scan the ledger package.", false},
	} {
		a, dir := scannerRun(t, manifest.StatusFailed, 2, 3, 4)
		e3 := &pipeline.Dispatch{Seq: 3, Role: "scanner", Phase: "scan", File: "3-scanner.md", Template: "scanner", Recorded: true, Status: manifest.StatusCompleted, Class: templates.RoleOutput, Entry: &manifest.Entry{FirstLine: 5, Line: 6}}
		a.Dispatches = append(a.Dispatches, e3)
		a.Dispatches[0].Entry = &manifest.Entry{FirstLine: 7, Line: 8} // seq 1 dispatched after both ended
		a.Pipeline.Files[3] = filepath.Join(dir, "3-scanner.md")
		a.describe = func(d *pipeline.Dispatch) string {
			return map[int]string{2: tc.body2, 3: tc.body3}[d.Seq]
		}
		pf := RunPreflight(a, PreflightOptions{Templates: dir, Redispatch: true})
		if tc.refused {
			require.Error(t, pf.Err, tc.name)
			assert.Contains(t, pf.Err.Error(), "seqs 2 and 3 of the same role and phase were given different instructions", tc.name)
		} else {
			require.NoError(t, pf.Err, tc.name)
		}
	}
}
