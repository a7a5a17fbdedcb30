package agent

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// runCommand runs script as a command agent on a fresh request.
func runCommand(t *testing.T, script string, timeout time.Duration) (Response, Request) {
	t.Helper()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	req.Timeout = timeout
	a, err := New(script, Options{})
	require.NoError(t, err)
	resp, err := a.Run(context.Background(), req)
	require.NoError(t, err)
	return resp, req
}

func TestCommandStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script  string
		status        manifest.Status
		summary       string
		reason        string
		verdict       string
		stderrLogWant string
	}{
		{name: "first line", script: "echo; echo '  Task 3 done, 5 tests  '; echo more", status: manifest.StatusCompleted, summary: "Task 3 done, 5 tests"},
		{name: "summary line wins", script: "echo first; echo 'SUMMARY: Task 3 done'; echo after", status: manifest.StatusCompleted, summary: "Task 3 done"},
		{name: "last summary wins", script: "echo 'SUMMARY: one'; echo 'summary: two'", status: manifest.StatusCompleted, summary: "two"},
		{name: "summary without newline", script: "printf 'x\\nSUMMARY: tail'", status: manifest.StatusCompleted, summary: "tail"},
		{name: "verdict", script: "echo FAIL; echo 'SUMMARY: gate'", status: manifest.StatusCompleted, summary: "gate", verdict: "FAIL"},
		{name: "exit 3", script: "echo partial; echo 'warming up' >&2; echo 'boom: disk full' >&2; exit 3", status: manifest.StatusFailed, summary: "partial", reason: "agent exited 3: boom: disk full", stderrLogWant: "warming up\nboom: disk full\n"},
		{name: "exit 1 silent", script: "exit 1", status: manifest.StatusFailed, summary: NoOutputSummary, reason: "agent exited 1"},
		{name: "empty stdout", script: "true", status: manifest.StatusCompleted, summary: NoOutputSummary, reason: "agent printed nothing"},
		{name: "blank stdout", script: "printf '\\n  \\n'", status: manifest.StatusCompleted, summary: NoOutputSummary, reason: "agent printed nothing"},
		{name: "killed by a signal", script: "kill -9 $$", status: manifest.StatusFailed, summary: NoOutputSummary, reason: "agent killed by signal killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, req := runCommand(t, tt.script, 0)
			assert.Equal(t, tt.status, resp.Status)
			assert.Equal(t, tt.summary, resp.Summary)
			assert.Equal(t, tt.reason, resp.Reason)
			assert.Equal(t, tt.verdict, resp.Verdict)
			assert.Equal(t, tt.script, resp.Agent)
			assert.Zero(t, resp.DurationS, "a fixed clock measures no time")
			log, err := os.ReadFile(StderrLogPath(req))
			require.NoError(t, err, "the stderr log exists even when empty")
			assert.Equal(t, tt.stderrLogWant, string(log))
		})
	}
}

func TestCommandStderrLogIsBesideTheDispatchFile(t *testing.T) {
	t.Parallel()
	_, req := runCommand(t, "echo hi >&2", 0)
	assert.Equal(t, filepath.Join(req.DispatchDir, "agent-logs", "21-build-implementer.stderr.log"), StderrLogPath(req))
	files, err := manifest.ReadDispatchDir(req.DispatchDir)
	require.NoError(t, err)
	require.Len(t, files, 1, "only the dispatch file counts as a numbered file")
	assert.Equal(t, manifest.KindDispatch, files[0].Kind)
}

func TestCommandTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := "sleep 30 & echo $! > " + pidFile + "; echo started; sleep 30"
	resp, _ := runCommand(t, script, 300*time.Millisecond)
	assert.Equal(t, manifest.StatusError, resp.Status)
	assert.Equal(t, "agent timed out after 300ms", resp.Reason)
	assert.Equal(t, "started", resp.Summary, "output before the timeout is kept")
	assertGone(t, pidFile)
}

func TestCommandExitKillsLeftoverChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	resp, _ := runCommand(t, "sleep 30 & echo $! > "+pidFile+"; echo 'SUMMARY: done'", 0)
	assert.Equal(t, manifest.StatusCompleted, resp.Status)
	assert.Equal(t, "done", resp.Summary)
	assertGone(t, pidFile)
}

// assertGone checks that the process whose pid is in pidFile was killed: it is gone
// or a zombie waiting for a reaper. SIGKILL is delivered asynchronously, so the check
// waits for the process to finish dying (the deadline only bounds a broken kill).
func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	state := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return // gone
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		require.NotEmpty(t, fields)
		if state = fields[0]; state == "Z" || state == "X" {
			return
		}
	}
	t.Errorf("child %d still runs (state %s)", pid, state)
}

func TestCommandInterrupted(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "x\n", false)
	a, err := New("sleep 30", Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	resp, err := a.Run(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusError, resp.Status)
	assert.Equal(t, "agent interrupted: context canceled", resp.Reason)
}

func TestCommandOptionsTimeoutIsTheDefault(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", nil, "x\n", false)
	a, err := New("sleep 30", Options{Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	resp, err := a.Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusError, resp.Status)
	assert.Equal(t, "agent timed out after 200ms", resp.Reason)
}

// Not parallel: it measures the process's allocations, which parallel tests would add to.
func TestCommandHugeOutputIsBounded(t *testing.T) {
	const n = 10_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, _ := runCommand(t, "head -c "+strconv.Itoa(n)+" /dev/zero | tr '\\0' a; echo; echo 'SUMMARY: big'", 0)
	runtime.ReadMemStats(&after)
	assert.Equal(t, manifest.StatusCompleted, resp.Status)
	assert.Equal(t, "big", resp.Summary)
	assert.True(t, resp.Truncated)
	assert.Len(t, resp.Output, MaxOutputBytes)
	assert.Equal(t, n+1+len("SUMMARY: big\n"), resp.OutputChars)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "stdout must not be buffered beyond the cap")
}

func TestCommandOutputCharsCountsRunes(t *testing.T) {
	t.Parallel()
	resp, _ := runCommand(t, "printf 'h\\303\\251llo \\342\\234\\223\\n'", 0)
	assert.Equal(t, "héllo ✓", resp.Summary)
	assert.Equal(t, 8, resp.OutputChars)
	assert.Equal(t, "héllo ✓\n", string(resp.Output))
	assert.False(t, resp.Truncated)
}

func TestCommandSeesPromptEnvAndWorkDir(t *testing.T) {
	out := t.TempDir()
	t.Setenv("REPLAY_TEST_PARENT", "inherited")
	// The test run's own REPLAY_* settings (REPLAY_REQUIRE_GIT, REPLAY_STRESS, ...)
	// are inherited like any other variable: leave them out of the comparison.
	own := []string{"REPLAY_NONE_"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "REPLAY_") && name != "REPLAY_TEST_PARENT" {
			own = append(own, name)
		}
	}
	script := `env | grep -E '^REPLAY_' | grep -vE '^(` + strings.Join(own, "|") + `)=' | sort > ` + out + `/env.txt; cat > ` + out + `/stdin.txt; pwd -P > ` + out + `/pwd.txt; echo 'SUMMARY: ok'`
	resp, req := runCommand(t, script, 0)
	require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)

	env, err := os.ReadFile(filepath.Join(out, "env.txt"))
	require.NoError(t, err)
	want := strings.Join([]string{
		"REPLAY_DISPATCH_DIR=" + req.DispatchDir,
		"REPLAY_DISPATCH_FILE=" + req.DispatchFile,
		"REPLAY_PHASE=3",
		"REPLAY_ROLE=implementer",
		"REPLAY_SEQ=21",
		"REPLAY_SESSION=1775430161",
		"REPLAY_TASK=3",
		"REPLAY_TEST_PARENT=inherited",
	}, "\n") + "\n"
	assert.Equal(t, want, string(env))

	stdin, err := os.ReadFile(filepath.Join(out, "stdin.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Read and follow the dispatch file at "+req.DispatchFile+".\n"+
		"Dispatch: 21-build-implementer | Role: implementer | Phase: 3 | Task: 3\n"+
		"When done, print a one-line summary (SUMMARY: ...) as the last line.\n", string(stdin))

	pwd, err := os.ReadFile(filepath.Join(out, "pwd.txt"))
	require.NoError(t, err)
	wantDir, err := filepath.EvalSymlinks(req.WorkDir)
	require.NoError(t, err)
	assert.Equal(t, wantDir, strings.TrimSpace(string(pwd)))
}

func TestPromptWithoutPhaseOrTask(t *testing.T) {
	t.Parallel()
	req := Request{Seq: 4, Template: "quality-gate", Role: "quality-gate", DispatchFile: "/d/4-quality-gate.md"}
	assert.Contains(t, Prompt(req), "Dispatch: 4-quality-gate | Role: quality-gate | Phase: - | Task: -\n")
	assert.Contains(t, Environ(req), "REPLAY_TASK=")
	assert.Contains(t, Environ(req), "REPLAY_PHASE=")
}

func TestCommandCannotStart(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", nil, "x\n", false)
	req.WorkDir = filepath.Join(req.WorkDir, "missing")
	a, err := New("true", Options{})
	require.NoError(t, err)
	_, err = a.Run(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot start the agent")
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "   ", "builtin:nope"} {
		_, err := New(spec, Options{})
		assert.Error(t, err, spec)
	}
}
