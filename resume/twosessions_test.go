package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// Symptom 5, found by the crash simulator's "two live sessions" shape (seed
// 151): the other session has more than one dispatch whose window holds the
// commit, an unrelated one first (a scanner left in flight: its window is open
// to now) and the fixer that made it. The commit shares a word or two with
// this run's in-flight task, none with the scanner's context and most with the
// fixer's: it is the fixer's work. Asking the first window alone, the plan
// charged it to this run's in-flight dispatch as a partial commit, and the
// restore undid the other session's work without refusing.
func TestIssue36OtherSessionsCommitJudgedAgainstEveryWindow(t *testing.T) {
	t.Parallel()
	p := build(t)
	other := "1775437000"
	start := fixture.Start.Add(8100 * time.Second)
	dir := filepath.Join(p.Tmp, "crucible-dispatch-"+other)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(seq int, role, phase, body string, at time.Time) {
		h := manifest.DispatchHeader{Template: role, Pipeline: "debugging", Phase: phase, Timestamp: at, DispatchDir: dir + "/"}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s.md", seq, role)), manifest.FormatDispatchFile(h, []byte(body)), 0o644))
	}
	write(1, "scanner", "1", "Scan the billing package for injection bugs.\n", start.Add(-time.Hour))
	write(2, "fixer", "3", "Fix the audit log entry written for failed logins: the entry drops the user id. Commit your work.\n", start)
	lines := `{"seq":1,"file":"1-scanner.md","role":"scanner","phase":"1","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":50,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n" +
		`{"seq":2,"file":"2-fixer.md","role":"fixer","phase":"3","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":60,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(lines), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p.Scratch, manifest.DispatchActivePrefix+other), []byte("dispatch-dir: "+dir+"/\nseq: 2\n"), 0o644))
	fix := commitAt(t, p.Project, "internal/audit/entry.go", "fix: audit log entry for failed logins keeps the user id", start.Add(5*time.Minute))

	_, a := decideFixture(t, p)
	var bad problems
	for _, pc := range a.Partial {
		bad.check(pc.Commit.Hash != fix, "the other session's commit %s is charged to seq %d as a partial commit", fix[:8], pc.Dispatch.Seq)
	}
	owned := false
	for _, w := range a.OthersWork {
		owned = owned || (w.Commit.Hash == fix && w.Dispatch.Seq == 2)
	}
	bad.check(owned, "the other session's commit %s is not its fixer's work (others' work %v)", fix[:8], a.OthersWork)
	issue36Verdict(t, "two-sessions-first-window", bad)
}
