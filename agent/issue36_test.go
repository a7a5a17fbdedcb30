//go:build unix

package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// issue36Pending lists the symptoms of issue 36 this package still shows; see
// e2e's issue36Pending.
var issue36Pending = map[string]string{}

// issue36Stand is set in the child process TestIssue36CommandAgentDiesWithItsParent
// starts: it stands in for replay and runs one command agent.
const issue36Stand = "REPLAY_ISSUE36_STAND_IN"

// Symptom 6 at the agent: a process that runs a command agent (a stand-in for
// replay: this test binary) is killed by SIGKILL while the agent works in a
// child of its shell; the agent's work must not go on after it. Real
// processes, a real signal.
func TestIssue36CommandAgentDiesWithItsParent(t *testing.T) {
	if dir := os.Getenv(issue36Stand); dir != "" {
		ag, err := New("cat >/dev/null; touch started; (sleep 1.5; touch finished) & wait; echo SUMMARY: done", Options{})
		if err != nil {
			os.Exit(2)
		}
		_, _ = ag.Run(context.Background(), Request{Seq: 1, Template: "build-implementer", DispatchDir: dir, DispatchFile: filepath.Join(dir, "1-build-implementer.md"), WorkDir: dir})
		os.Exit(0)
	}
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIssue36CommandAgentDiesWithItsParent$")
	cmd.Env = append(os.Environ(), issue36Stand+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	started := false
	for i := 0; i < 400 && !started; i++ {
		_, err := os.Stat(filepath.Join(dir, "started"))
		started = err == nil
		time.Sleep(25 * time.Millisecond)
	}
	if !started {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // out is read only once the process and its copiers are done
		t.Fatalf("the agent never started: %s", out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	time.Sleep(2500 * time.Millisecond)
	var problems []string
	if _, err := os.Stat(filepath.Join(dir, "finished")); err == nil {
		problems = append(problems, "the agent's work went on after the process that ran it was killed")
	}
	if reason, pending := issue36Pending["agent-outlives-replay"]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s):\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Fatalf("symptom no longer shows: remove it from issue36Pending (%s)", reason)
	}
	require.Empty(t, problems)
}
