package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

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
	t.Parallel()
	s, p := pipelineSandbox(t)
	calls := filepath.Join(p.Root, "..", "calls.txt")
	// The agent commits its task's work: a resume serves a recording only when
	// its effects (here the commit) reproduce the work (issue 36).
	live := writeAgent(t, p, "counting-agent.sh", fmt.Sprintf("echo call >> %q\ncat >/dev/null\n%s\necho \"SUMMARY: task $REPLAY_TASK done by $REPLAY_ROLE\"\n", calls, agentCommit(p)))
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
			assert.Equal(t, manifestTail, strings.ReplaceAll(got, `,"recorded_by":"21-build-implementer","reused":true`, ""), "the live run's manifest tail, but for the reused marker and the recording's dispatch")
			if reusedTail == "" {
				reusedTail = got
			} else {
				assert.Equal(t, reusedTail, got, "two replays from recordings write byte-identical manifest tails")
			}
		})
	}
}

func TestRecordedAgentWithoutRecordingFails(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "recorded", "--now", now(p))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "no recorded response for 21-build-implementer")
	m := readManifest(t, p)
	assert.Equal(t, manifest.StatusFailed, m.Entry(21).Status)
}

func TestAgentFailureModes(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// A command agent inherits the environment of the run that starts it: in process,
// the sandbox's HOME and TMPDIR, never the test process's own.
func TestCommandAgentGetsTheRunsEnvironment(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	seen := filepath.Join(p.Root, "agent-env")
	ag := writeAgent(t, p, "env-agent.sh", fmt.Sprintf("printf '%%s\\n%%s\\n' \"$HOME\" \"$TMPDIR\" > %q\ncat >/dev/null\necho \"SUMMARY: done\"\n", seen))
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, p.Home+"\n"+p.Tmp+"\n", readFile(t, seen))
	assert.NotEqual(t, os.Getenv("HOME"), p.Home, "the test process's HOME is elsewhere")
}

// agentCommit is a shell line that commits a file for the dispatch's task at the
// fixture's clock, with a pinned identity: the work a recording of it holds.
func agentCommit(p *fixture.Pipeline) string {
	return fmt.Sprintf("mkdir -p tasks && echo \"$REPLAY_TASK\" >tasks/$REPLAY_SEQ.txt && git add tasks && GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid GIT_AUTHOR_DATE=%[1]s GIT_COMMITTER_DATE=%[1]s git commit -q -m \"feat: task $REPLAY_TASK\"", now(p))
}
