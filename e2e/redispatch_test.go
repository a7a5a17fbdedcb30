package e2e

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// originalLines is the number of lines of the fixture's manifest (the torn one included).
const originalLines = 40

// readManifest reads the fixture's manifest and checks that every warning is about
// an original line: the lines replay appended are all valid.
func readManifest(t *testing.T, p *fixture.Pipeline) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	for _, w := range m.Warnings {
		assert.LessOrEqual(t, w.Line, originalLines, "a line replay appended is damaged: %s", w)
	}
	return m
}

// writeAgent writes a shell agent script into the sandbox and returns the --agent value.
func writeAgent(t *testing.T, p *fixture.Pipeline, name, script string) string {
	t.Helper()
	path := filepath.Join(p.Root, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755))
	return "sh " + path
}

func TestRedispatchWithSimulatedAgent(t *testing.T) {
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "## Re-dispatch")
	// Off a terminal: a start and a finish line per dispatch, exactly.
	assert.Contains(t, r.Stderr, "dispatch 1/1 started: seq 21 (replay of 19) build-implementer phase 3 task 3\n"+
		"dispatch 1/1: seq 21 (replay of 19) build-implementer phase 3 task 3: completed (live, 0.0s)\n")
	// Every warning once, the undo command once on stderr (the report on stdout is a file's record).
	for _, line := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(line, "warning: ") || strings.HasPrefix(line, "To undo this restore: ") {
			assert.Equal(t, 1, strings.Count(r.Stderr, line+"\n"), line)
		}
	}

	m := readManifest(t, p)
	e := m.Entry(21)
	require.NotNil(t, e)
	assert.Equal(t, manifest.StatusCompleted, e.Status)
	require.NotNil(t, e.ReplayOf)
	assert.Equal(t, 19, *e.ReplayOf)
	require.NotNil(t, e.ReplaySession)
	assert.Equal(t, fmt.Sprint(p.Now.Unix()), *e.ReplaySession)
	assert.Equal(t, []manifest.Status{manifest.StatusDispatched, manifest.StatusCompleted}, m.History[21])
	_, err := os.Stat(filepath.Join(p.DurableDispatchDir, "21-build-implementer.md"))
	assert.NoError(t, err)

	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	c, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)
	assert.Contains(t, c.Message, "task 3", "the project has the task-3 commit again")
	assert.Equal(t, p.Checkpoints[6].ProjectHead, c.ParentHashes[0], "on top of the restored pre-wave-2 head")

	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing to resume", "a finished resume leaves nothing to resume")
}

// snapshot copies dir to a sibling and returns a function that puts it back.
func snapshot(t *testing.T, dir string) func() {
	t.Helper()
	saved := dir + ".saved"
	require.NoError(t, exec.Command("cp", "-a", dir, saved).Run())
	return func() {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, exec.Command("cp", "-a", saved, dir).Run())
	}
}

func TestRecordedReplayIsDeterministic(t *testing.T) {
	s, p := pipelineSandbox(t)
	calls := filepath.Join(p.Root, "..", "calls.txt")
	live := writeAgent(t, p, "counting-agent.sh", fmt.Sprintf("echo call >> %q\ncat >/dev/null\necho \"SUMMARY: task $REPLAY_TASK done by $REPLAY_ROLE\"\n", calls))
	restore := snapshot(t, p.Root)

	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", live, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, 1, countLines(t, calls))
	manifestTail := tail(t, p.ManifestPath, originalLines)
	dispatchFile, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, "21-build-implementer.md"))
	require.NoError(t, err)
	responses := filepath.Join(p.Root, "..", "responses")
	require.NoError(t, exec.Command("cp", "-a", filepath.Join(p.DurableDispatchDir, "responses"), responses).Run())

	var reusedTail string
	for _, agentSpec := range []string{"recorded", live} {
		t.Run(agentSpec, func(t *testing.T) {
			restore()
			require.NoError(t, exec.Command("cp", "-a", responses, filepath.Join(p.DurableDispatchDir, "responses")).Run())
			r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", agentSpec, "--now", now(p))
			require.Equal(t, 0, r.Code, r.Stderr)
			assert.Contains(t, r.Stdout, "0 live, 1 reused from recordings, 0 failed")
			assert.Equal(t, 1, countLines(t, calls), "zero agent calls")
			again, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, "21-build-implementer.md"))
			require.NoError(t, err)
			assert.Equal(t, string(dispatchFile), string(again), "byte-identical dispatch file")
			got := tail(t, p.ManifestPath, originalLines)
			assert.Equal(t, manifestTail, strings.ReplaceAll(got, `,"reused":true`, ""), "the live run's manifest tail, but for the reused marker")
			if reusedTail == "" {
				reusedTail = got
			} else {
				assert.Equal(t, reusedTail, got, "two replays from recordings write byte-identical manifest tails")
			}
		})
	}
}

func TestRecordedAgentWithoutRecordingFails(t *testing.T) {
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "recorded", "--now", now(p))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "no recorded response for 21-build-implementer")
	m := readManifest(t, p)
	assert.Equal(t, manifest.StatusFailed, m.Entry(21).Status)
}

func TestAgentFailureModes(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		extra   []string
		code    int
		status  manifest.Status
		summary string
	}{
		{"exits non-zero", "echo working; echo 'cannot build' >&2; exit 3\n", nil, 1, manifest.StatusFailed, ""},
		{"hangs past the timeout", "sleep 30\n", []string{"--agent-timeout", "300ms"}, 1, manifest.StatusError, ""},
		{"prints nothing", "cat >/dev/null\n", nil, 0, manifest.StatusCompleted, "(no output)"},
		{"prints 10 MB", "head -c 10000000 /dev/zero | tr '\\0' 'x'; echo; echo 'SUMMARY: big'\n", nil, 0, manifest.StatusCompleted, "big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := pipelineSandbox(t)
			ag := writeAgent(t, p, "agent.sh", tt.script)
			args := append([]string{p.Scratch, "--yes", "--agent", ag, "--now", now(p)}, tt.extra...)
			r := s.Run(t, p.Project, args...)
			assert.Equal(t, tt.code, r.Code, r.Stderr)
			m := readManifest(t, p)
			e := m.Entry(21)
			require.NotNil(t, e)
			assert.Equal(t, tt.status, e.Status)
			if tt.summary != "" {
				require.NotNil(t, e.Summary)
				assert.Equal(t, tt.summary, *e.Summary)
			}
			if tt.code != 0 {
				assert.Contains(t, r.Stderr, "re-dispatch stopped: seq 21")
				// Nothing is lost: the next resume goes on from the same point with a new seq.
				r = s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
				require.Equal(t, 0, r.Code, r.Stderr)
				assert.Contains(t, r.Stdout, "**Next seq:** 22")
			}
		})
	}
}

func TestKill9DuringRedispatch(t *testing.T) {
	s, p := pipelineSandbox(t)
	// The agent outlasts the kill window, so every kill lands somewhere in a run
	// (plan, restore, seq reservation, dispatch file, agent call) until the last run.
	ag := writeAgent(t, p, "slow-agent.sh", "cat >/dev/null\nsleep 1\necho \"SUMMARY: task $REPLAY_TASK done\"\n")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		cmd := s.Command(p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p), "--quiet")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.Intn(700)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	m := readManifest(t, p)
	files := map[int]string{}
	for _, e := range m.Entries {
		if e.Seq <= 19 {
			continue
		}
		if other, dup := files[e.Seq]; dup {
			t.Fatalf("seq %d used twice: %s and %s", e.Seq, other, e.File)
		}
		files[e.Seq] = e.File
		h := m.History[e.Seq]
		require.NotEmpty(t, h)
		assert.Equal(t, manifest.StatusDispatched, h[0], "seq %d starts with dispatched", e.Seq)
		assert.LessOrEqual(t, len(h), 2, "seq %d has one dispatched and at most one final line", e.Seq)
	}
	interrupted := 0
	for seq := range files {
		if len(m.History[seq]) == 1 {
			interrupted++
		}
	}
	t.Logf("%d replay seqs, %d of them interrupted in flight", len(files), interrupted)
	assert.Positive(t, interrupted, "some kills landed mid-dispatch")
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing to resume", "the pipeline ends complete")
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

// tail returns the lines of path after the first skip lines.
func tail(t *testing.T, path string, skip int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) <= skip {
		return ""
	}
	return strings.Join(lines[skip:], "")
}

func TestRedispatchRegeneratesALostDispatchFile(t *testing.T) {
	s, p := pipelineSandbox(t)
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		require.NoError(t, os.Remove(filepath.Join(dir, "19-build-implementer.md")))
	}

	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.Equal(t, 1, r.Code, "without the template folder a lost dispatch cannot be rebuilt")
	assert.Contains(t, r.Stderr, "pass --templates DIR")

	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--templates", p.Templates, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	m := readManifest(t, p)
	var file string
	for _, e := range m.Entries {
		if e.ReplayOf != nil && *e.ReplayOf == 19 && e.Status == manifest.StatusCompleted {
			file = e.File
		}
	}
	require.NotEmpty(t, file)
	body, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, file))
	require.NoError(t, err)
	tmpl, err := os.ReadFile(filepath.Join(p.Templates, "build-implementer-prompt.md"))
	require.NoError(t, err)
	assert.Contains(t, string(body), "# Dispatch: build-implementer")
	assert.Contains(t, string(body), string(tmpl))
	assert.Contains(t, string(body), "Regenerated by replay from the manifest: role build-implementer, phase 3, task 3 (original seq 19).")
}

func TestRedispatchQuietAndJSONPrintNoProgress(t *testing.T) {
	for _, flag := range []string{"--quiet", "--json"} {
		t.Run(flag, func(t *testing.T) {
			s, p := pipelineSandbox(t)
			r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p), flag)
			require.Equal(t, 0, r.Code, r.Stderr)
			assert.NotContains(t, r.Stderr, "dispatch 1/1")
			if flag == "--quiet" {
				assert.Empty(t, r.Stderr)
			}
		})
	}
}
