package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
)

// corpusSandbox builds the reference fixture n times in separate directories and
// moves each one's recorded run (scratch and shadow under .claude/projects/<H>)
// into one shared HOME, as one user's machine holds several projects' runs.
func corpusSandbox(t *testing.T, n int) (*Sandbox, []*fixture.Pipeline) {
	t.Helper()
	s := NewSandbox(t)
	var ps []*fixture.Pipeline
	for i := range n {
		p, err := fixture.Build(filepath.Join(s.Root, "runs", string(rune('a'+i))), fixture.Options{})
		require.NoError(t, err)
		dst := paths.ProjectRoot(s.Home, p.Project)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.Rename(paths.ProjectRoot(p.Home, p.Project), dst))
		ps = append(ps, p)
	}
	return s, ps
}

// corpusDoc is the part of the corpus --json document the tests read.
type corpusDoc struct {
	Format    string `json:"format"`
	Aggregate struct {
		Pipelines    int            `json:"pipelines"`
		Decisions    map[string]int `json:"decisions"`
		Verdict      string         `json:"verdict"`
		BaselinePass struct {
			Passed, N int
		} `json:"baseline_pass"`
	} `json:"aggregate"`
	Rows []struct {
		Pipeline string `json:"pipeline"`
		Error    string `json:"error"`
		Decision *struct {
			Verdict string `json:"verdict"`
		} `json:"decision"`
	} `json:"pipelines"`
}

func corpusArgs(t *testing.T, s *Sandbox, p *fixture.Pipeline, out string, extra ...string) []string {
	t.Helper()
	repl := stricter(t, p, "stricter.md")
	args := []string{"corpus", filepath.Join(s.Root, "runs", "*", "project"), "--mutate", "build-reviewer-prompt.md=" + repl,
		"--templates", p.Templates, "--agent", "builtin:sim?flake=0.05&seed=7", "--now", now(p), "--out", out}
	return append(args, extra...)
}

func TestCorpusRunsEveryPipelineAndResumes(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 2)
	out := filepath.Join(s.Root, "corpus-out")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "2", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc corpusDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	assert.Equal(t, "replay-corpus/1", doc.Format)
	require.Len(t, doc.Rows, 2)
	assert.Equal(t, ps[0].Project, doc.Rows[0].Pipeline)
	assert.Equal(t, ps[1].Project, doc.Rows[1].Pipeline)
	for _, row := range doc.Rows {
		assert.Empty(t, row.Error)
		require.NotNil(t, row.Decision, row.Error)
	}
	t.Log(r.Stderr)
}
