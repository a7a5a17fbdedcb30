//go:build unix

package e2e

// The symptom 6 tests of issue 36 kill process groups: unix only (on Windows a
// re-dispatched agent keeps the single-process kill, see internal/platform).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// slowAgent commits after a pause; started and finished mark its progress,
// and work.pid (beside started) holds the pid of the process doing its work,
// written before started.
func slowAgent(t *testing.T, p *fixture.Pipeline) (ag, started, finished string) {
	started = filepath.Join(p.Root, "agent-started")
	finished = filepath.Join(p.Root, "agent-finished")
	// The work runs in a child of the agent's shell (as a real agent's tools do).
	ag = writeAgent(t, p, "slow.sh", "cat >/dev/null\n(sleep 1.5; "+agentCommit(p)+"; touch "+finished+") &\necho $! >"+workPIDFile(started)+"\ntouch "+started+"\nwait\necho 'SUMMARY: done'\n")
	return ag, started, finished
}

// agentCommit is the shell command with which the agents of these tests commit
// their work item.
func agentCommit(p *fixture.Pipeline) string {
	return fmt.Sprintf("GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid GIT_AUTHOR_DATE=%[1]s GIT_COMMITTER_DATE=%[1]s git commit -q --allow-empty -m \"feat: task $REPLAY_TASK done\"", now(p))
}

// workPIDFile is where slowAgent writes the pid of its work process.
func workPIDFile(started string) string {
	return filepath.Join(filepath.Dir(started), "agent-work.pid")
}

// awaitWorkGone waits until the process doing slowAgent's work has ended
// (then nothing can mark the work finished any more), at most 2.5 s: longer
// than the work's pause, so a work process that outlives replay has marked
// its work finished by then.
func awaitWorkGone(t *testing.T, started string) {
	t.Helper()
	data, err := os.ReadFile(workPIDFile(started))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	for deadline := time.Now().Add(2500 * time.Millisecond); !processGone(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether process pid has ended: it does not exist, or it
// is a zombie its parent has not reaped yet (where /proc tells).
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state is the field after the command name's closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitFor waits up to 20 s for path to exist.
func waitFor(path string) bool {
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Symptom 6: an agent does not outlive the replay that started it, whether
// replay's process group is killed (a terminal, a supervisor) or replay alone
// is killed with SIGKILL; real processes, real signals.
func TestIssue36AgentDiesWithReplay(t *testing.T) {
	t.Parallel()
	var bad problems
	for _, group := range []bool{true, false} {
		s, p := pipelineSandbox(t)
		ag, started, finished := slowAgent(t, p)
		cmd := s.Command(p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p), "--quiet")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		if !waitFor(started) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // out is read only once the process and its copiers are done
			t.Fatalf("the agent never started: %s", out.String())
		}
		recs, _ := filepath.Glob(filepath.Join(p.DurableDispatchDir, "agent-logs", "*.pid"))
		bad.check(len(recs) == 1, "while its agent runs, replay records it (agent-logs/*.pid): found %v", recs)
		for _, path := range recs {
			var rec agentRecord
			data, _ := os.ReadFile(path)
			bad.check(json.Unmarshal(data, &rec) == nil && rec.ReplayPID == cmd.Process.Pid && rec.AgentGroup > 0, "record %s: %s", path, data)
		}
		if group {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = cmd.Wait()
		awaitWorkGone(t, started)
		_, err := os.Stat(finished)
		bad.check(err != nil, "kill of replay (process group %v): its agent went on and committed after replay died", group)
	}
	issue36Verdict(t, "agent-outlives-replay", bad)
}

// agentRecord is what a replay records of an agent it runs, beside the
// agent's stderr log: the replay process and the agent's process group.
type agentRecord struct {
	ReplayPID  int `json:"replay_pid"`
	AgentGroup int `json:"agent_pgid"`
	Seq        int `json:"seq"`
}

// Symptom 6, second half: a resume finds a live agent of a run that died (its
// record names a replay process that is gone and an agent process group that
// still runs) before it restores or dispatches, and refuses, naming it; once
// the agent is gone the resume goes on. Real processes: a killed stand-in for
// the dead replay, a sleeping stand-in for the agent that escaped.
func TestIssue36ResumeRefusesWhileAnAgentOfADeadRunLives(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	dead := exec.Command("sleep", "30")
	require.NoError(t, dead.Start())
	_ = dead.Process.Signal(syscall.SIGKILL)
	_ = dead.Wait()
	agent := exec.Command("sleep", "30")
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, agent.Start())
	defer func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); _ = agent.Wait() }()
	rec, err := json.Marshal(agentRecord{ReplayPID: dead.Process.Pid, AgentGroup: agent.Process.Pid, Seq: 21})
	require.NoError(t, err)
	writeFile(t, p.DurableDispatchDir, "agent-logs/21-build-implementer.pid", string(rec), 0o644)

	var bad problems
	before := gitOut(t, s, p.Project, "rev-parse", "HEAD")
	ag, _, _ := slowAgent(t, p)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	bad.check(r.Code == 3, "resume while an agent of the dead run lives: exit %d, want 3 (refused): %s", r.Code, strings.TrimSpace(r.Stderr))
	bad.check(strings.Contains(r.Stderr, "still running") && strings.Contains(r.Stderr, strconv.Itoa(agent.Process.Pid)), "the refusal does not name the running agent's process group %d: %s", agent.Process.Pid, strings.TrimSpace(r.Stderr))
	bad.check(gitOut(t, s, p.Project, "rev-parse", "HEAD") == before, "the refused resume moved the branch")
	// The other side: once the agent is gone, the record is stale and the resume goes on.
	_ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL)
	_ = agent.Wait()
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--now", now(p))
	bad.check(r.Code == 0, "resume after the agent died: exit %d: %s", r.Code, strings.TrimSpace(r.Stderr))
	issue36Verdict(t, "live-agent-of-dead-run", bad)
}

// Symptom 6 over kill points (REPLAY_STRESS=1): replay --yes is killed (its
// process group or itself, by SIGKILL) at 16 points from its start through its
// agent's work; after each, the agent's work does not go on, and the next
// replay --yes ends with the work item done and nothing to resume.
func TestIssue36KillPointsAgentDiesWithReplay(t *testing.T) {
	if os.Getenv("REPLAY_STRESS") == "" {
		t.Skip("16 kill points of a few seconds each; set REPLAY_STRESS=1")
	}
	t.Parallel()
	passed := 0
	for i := 0; i < 16; i++ {
		s, p := pipelineSandbox(t)
		ag, _, finished := slowAgent(t, p)
		cmd := s.Command(p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p), "--quiet")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(i) * 150 * time.Millisecond)
		if i%2 == 0 {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = cmd.Wait()
		dead := time.Now()
		time.Sleep(2 * time.Second)
		st, err := os.Stat(finished)
		outlived := err == nil && st.ModTime().After(dead) // work done after replay died
		_ = os.Remove(finished)
		fast := writeAgent(t, p, "fast.sh", "cat >/dev/null\n"+agentCommit(p)+"\necho 'SUMMARY: done'\n")
		r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", fast, "--now", now(p))
		again := s.Run(t, p.Project, "plan", "--json", p.Scratch, "--now", now(p))
		var pl planJSON
		_ = json.Unmarshal([]byte(again.Stdout), &pl)
		ok := !outlived && r.Code == 0 && len(pl.Redo) == 0
		if ok {
			passed++
		} else {
			t.Logf("kill point %d (after %d ms, group %v): agent outlived replay %v, rerun exit %d, left to redo %v: %s", i, i*150, i%2 == 0, outlived, r.Code, redoSeqs(pl), strings.TrimSpace(r.Stderr))
		}
	}
	t.Logf("%d of 16 kill points end with the work done once and nothing to resume", passed)
	require.Equal(t, 16, passed)
}
