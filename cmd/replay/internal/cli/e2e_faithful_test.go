package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// headTree returns the tree hash of HEAD in the repository at dir.
func headTree(t *testing.T, dir string) string {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	c, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)
	return c.TreeHash.String()
}

// topFiles returns the regular files directly in dir (the recordings are a directory).
func topFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = string(data)
		}
	}
	return out
}

func TestFullyRecordedReplayEndsInTheOriginalState(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	restore := snapshot(t, p.Root)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	tree, files := headTree(t, p.Project), topFiles(t, p.DurableDispatchDir)
	manifestTail := tail(t, p.ManifestPath, originalLines)
	responses := filepath.Join(p.Root, "..", "responses-faithful")
	require.NoError(t, exec.Command("cp", "-a", filepath.Join(p.DurableDispatchDir, "responses"), responses).Run())

	restore() // the project without the implementer's commit, its refs and objects
	require.NotEqual(t, tree, headTree(t, p.Project))
	require.NoError(t, exec.Command("cp", "-a", responses, filepath.Join(p.DurableDispatchDir, "responses")).Run())
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "recorded", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "0 live, 1 reused from recordings, 0 failed")
	assert.Equal(t, tree, headTree(t, p.Project), "the replayed tree is the original's")
	got := topFiles(t, p.DurableDispatchDir)
	// The manifest differs by the reused marker and the dispatch whose recording
	// served it (recorded_by) only: compared as its tail below.
	delete(got, manifest.ManifestFile)
	delete(files, manifest.ManifestFile)
	assert.Equal(t, len(files), len(got))
	for name, data := range files {
		assert.True(t, data == got[name], "%s: the replay's bytes differ from the original's", name)
	}
	assert.Equal(t, manifestTail, strings.ReplaceAll(tail(t, p.ManifestPath, originalLines), `,"recorded_by":"21-build-implementer","reused":true`, ""))
}

func TestReuseFlagIsChecked(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "recorded", "--reuse", "sometimes", "--now", now(p))
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "give exact, template or never")
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "recorded", "--reuse", "never", "--now", now(p))
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "--agent recorded never runs one")
}

func TestReuseNeverRunsLive(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	calls := filepath.Join(p.Root, "..", "calls-never.txt")
	live := writeAgent(t, p, "counting-agent.sh", fmt.Sprintf("echo call >> %q\ncat >/dev/null\n%s\necho \"SUMMARY: done by $REPLAY_ROLE\"\n", calls, agentCommit(p)))
	restore := snapshot(t, p.Root)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", live, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	responses := filepath.Join(p.Root, "..", "responses-never")
	require.NoError(t, exec.Command("cp", "-a", filepath.Join(p.DurableDispatchDir, "responses"), responses).Run())
	for _, tt := range []struct {
		reuse string
		calls int
		says  string
	}{
		{"exact", 1, "0 live, 1 reused from recordings"},
		{"template", 1, "0 live, 1 reused from recordings"},
		{"never", 2, "1 live, 0 reused from recordings"},
	} {
		restore()
		require.NoError(t, exec.Command("cp", "-a", responses, filepath.Join(p.DurableDispatchDir, "responses")).Run())
		r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", live, "--reuse", tt.reuse, "--now", now(p))
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Contains(t, r.Stdout, tt.says, tt.reuse)
		assert.Equal(t, tt.calls, countLines(t, calls), tt.reuse)
	}
}
