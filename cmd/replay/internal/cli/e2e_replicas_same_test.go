package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicatedABReplayTwiceIsByteIdentical runs the same replicated A/B replay
// twice, with replicas running two at once, from the same state at the same paths
// (the sandbox is copied aside and put back in between), and compares every output
// byte for byte: the --json document, the markdown report, the JSONL log line and
// the HTML page. Nothing scheduling-, time- or path-dependent may leak into them:
// the replicas take manifest seqs in whatever order they reach the shared manifest,
// so a seq in a simulated response, a commit or the result would show here.
func TestReplicatedABReplayTwiceIsByteIdentical(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	saved := filepath.Join(t.TempDir(), "saved")
	require.NoError(t, os.CopyFS(saved, os.DirFS(p.Root)))
	// Both runs start from the copy (CopyFS keeps only the execute bits of modes).
	restore := func() {
		entries, err := os.ReadDir(p.Root)
		require.NoError(t, err)
		for _, e := range entries {
			require.NoError(t, os.RemoveAll(filepath.Join(p.Root, e.Name())))
		}
		require.NoError(t, os.CopyFS(p.Root, os.DirFS(saved)))
	}
	html := filepath.Join(t.TempDir(), "report.html")
	dir := filepath.Dir(p.ManifestPath)
	run := func() map[string]string {
		r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
			"--agent", "builtin:sim?flake=0.2&seed=11", "--now", now(p),
			"--replicas", "6", "--jobs", "2", "--json", "--html", html)
		require.Equal(t, 0, r.Code, r.Stderr)
		out := map[string]string{"stdout": r.Stdout, "html": readFile(t, html),
			"jsonl": readFile(t, filepath.Join(dir, "replay-ab-replicas.jsonl"))}
		mds, err := filepath.Glob(filepath.Join(dir, "replay-ab-*.md"))
		require.NoError(t, err)
		require.Len(t, mds, 1)
		out[filepath.Base(mds[0])] = readFile(t, mds[0])
		return out
	}
	restore()
	one := run()
	restore()
	two := run()
	require.Len(t, two, len(one))
	for name, want := range one {
		assert.Equal(t, want, two[name], "%s differs between two runs of the same replicated A/B replay", name)
	}
	assert.Contains(t, one["stdout"], `"output_chars"`)
}
