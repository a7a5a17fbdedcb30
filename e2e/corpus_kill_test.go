package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
)

// corpusOf builds the reference fixture n times in separate directories of one
// sandbox and moves each recorded run under the sandbox's HOME; it returns the
// sandbox and the arguments of a corpus run over them.
func corpusOf(t *testing.T, n int) (*Sandbox, []string) {
	t.Helper()
	s := NewSandbox(t)
	var first *fixture.Pipeline
	for i := range n {
		p, err := fixture.Build(filepath.Join(s.Root, "runs", string(rune('a'+i))), fixture.Options{})
		require.NoError(t, err)
		dst := paths.ProjectRoot(s.Home, p.Project)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.Rename(paths.ProjectRoot(p.Home, p.Project), dst))
		if first == nil {
			first = p
		}
	}
	orig, err := os.ReadFile(filepath.Join(first.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	repl := filepath.Join(s.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, append(orig, "\n- Every function must have a test.\n"...), 0o644))
	return s, []string{"corpus", "runs/*/project", "--mutate", "build-reviewer-prompt.md=" + repl, "--templates", first.Templates,
		"--agent", "builtin:sim?flake=0.2&seed=3", "--replicas", "2", "--now", now(first), "--out", "corpus-out", "--json"}
}

// comparable is a corpus result with the sandbox root masked and the per-pipeline
// keys (hashes of the path) and report paths (which name replica sessions) left out.
func comparable(t *testing.T, s *Sandbox, doc string) string {
	t.Helper()
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(doc, s.Root, "$ROOT")), &res), doc)
	for _, row := range res["pipelines"].([]any) {
		delete(row.(map[string]any), "report")
		delete(row.(map[string]any), "key") // a hash of the pipeline path
	}
	b, err := json.MarshalIndent(res, "", " ")
	require.NoError(t, err)
	return string(b)
}

// TestCorpusKilledContinuesWhereItStopped kills the binary after the first of
// three pipelines is in the corpus log, reruns it, and compares the result with an
// uninterrupted run of an identical corpus.
func TestCorpusKilledContinuesWhereItStopped(t *testing.T) {
	t.Parallel()
	whole, args := corpusOf(t, 3)
	want := whole.Run(t, whole.Root, args...)
	require.Equal(t, 0, want.Code, want.Stderr)

	s, args := corpusOf(t, 3)
	cmd := s.Command(s.Root, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	logPath := filepath.Join(s.Root, "corpus-out", "corpus-log.jsonl")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, _ := os.ReadFile(logPath)
		if bytes.Count(data, []byte("\n")) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.NotContains(t, out.String(), "panic")
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	finished := bytes.Count(data, []byte("\n")) - 1
	require.GreaterOrEqual(t, finished, 1)
	require.Less(t, finished, 3, "the kill came after the whole corpus finished")
	_, err = os.Stat(filepath.Join(s.Root, "corpus-out", "corpus-result.json"))
	assert.True(t, os.IsNotExist(err), "no result before the corpus finished")

	got := s.Run(t, s.Root, args...)
	require.Equal(t, 0, got.Code, got.Stderr)
	assert.Equal(t, finished, strings.Count(got.Stderr, "finished in an earlier run"), got.Stderr)
	assert.Equal(t, comparable(t, whole, want.Stdout), comparable(t, s, got.Stdout))
}
