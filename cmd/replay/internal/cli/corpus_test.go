package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	assert.Equal(t, 2, doc.Aggregate.Pipelines)
	assert.Equal(t, 4, doc.Aggregate.BaselinePass.N)
	assert.Contains(t, r.Stderr, "[2/2]")
	written, err := os.ReadFile(filepath.Join(out, "corpus-result.json"))
	require.NoError(t, err)
	assert.JSONEq(t, r.Stdout, string(written))

	again := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "2", "--json")...)
	require.Equal(t, 0, again.Code, again.Stderr)
	assert.Equal(t, r.Stdout, again.Stdout, "a rerun gives the same result")
	assert.Contains(t, again.Stderr, "finished in an earlier run")
	assert.NotContains(t, again.Stderr, "replaying...")

	other := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "3")...)
	assert.Equal(t, 3, other.Code, other.Stderr)
	assert.Contains(t, other.Stderr, "other arguments: --replicas 2 (now 3)")
	stricter := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "2", "--alpha", "0.01")...)
	assert.Equal(t, 3, stricter.Code, stricter.Stderr)
	assert.Contains(t, stricter.Stderr, "other arguments: --alpha 0.05 (now 0.01)", "the corpus decision is at the run's alpha")

	md := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "2")...)
	require.Equal(t, 0, md.Code, md.Stderr)
	assert.Contains(t, md.Stdout, "# Corpus A/B replay over 2 pipelines")
	assert.Contains(t, md.Stdout, "The whole-corpus decision tests the corpus at once, pipelines as strata")
	assert.Contains(t, md.Stdout, "### Statistics of the whole-corpus decision\n\n- Alpha: 0.05")
	assert.Contains(t, md.Stdout, "over 4 pairs", "pairs pooled over the pipelines")

	changed := corpusArgs(t, s, ps[0], out)
	require.NoError(t, os.WriteFile(filepath.Join(ps[0].Root, "stricter.md"), []byte("another reviewer\n"), 0o644))
	edited := s.Run(t, s.Root, append(changed, "--replicas", "2")...)
	assert.Equal(t, 3, edited.Code, edited.Stderr)
	assert.Contains(t, edited.Stderr, "mutation content", "the same --mutate flag with another file content is other arguments")

	gate := s.Run(t, s.Root, "gate", "--result", filepath.Join(out, "corpus-result.json"), "--fail-on", doc.Aggregate.Verdict)
	assert.Equal(t, 1, gate.Code, gate.Stdout+gate.Stderr)
	assert.Contains(t, gate.Stdout, "Gate FAILED: corpus decision "+doc.Aggregate.Verdict+" over 2 pipelines")
	assert.Contains(t, gate.Stdout, "Statistics:\n  Alpha: 0.05", "the corpus gate says what the stratified decision rests on")
	assert.Contains(t, gate.Stdout, "Decided by step ")
	gate = s.Run(t, s.Root, "gate", "--result", filepath.Join(out, "corpus-result.json"), "--fail-on", "adopt", "--max-regression", "-0.5", "--json")
	assert.Equal(t, 2, gate.Code, "a negative --max-regression is a usage error: %s", gate.Stderr)
	gate = s.Run(t, s.Root, "gate", "--result", filepath.Join(out, "corpus-result.json"), "--fail-on", "adopt", "--max-regression", "0", "--json")
	var gr struct {
		Verdict  string   `json:"verdict"`
		Failures []string `json:"failures"`
	}
	require.NoError(t, json.Unmarshal([]byte(gate.Stdout), &gr), gate.Stdout)
	assert.Equal(t, doc.Aggregate.Verdict, gr.Verdict)
	assert.Equal(t, len(gr.Failures) > 0, gate.Code == 1, "exit 1 exactly when the gate lists failures")
	gate = s.Run(t, s.Root, "gate", "--result", filepath.Join(out, "corpus-result.json"), "--fail-on", "adopt", "--max-regression", "1", "--allow-undecided")
	if doc.Aggregate.Verdict != "adopt" {
		assert.Equal(t, 0, gate.Code, gate.Stdout+gate.Stderr)
		assert.Contains(t, gate.Stdout, "Gate passed")
	}
}

func TestCorpusBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 1)
	out := filepath.Join(s.Root, "corpus-out")
	base := corpusArgs(t, s, ps[0], out)
	cases := map[string][]string{
		"empty corpus":                append([]string{"corpus", filepath.Join(s.Root, "nothing", "*")}, base[2:]...),
		"--replicas 0":                append(base, "--replicas", "0"),
		"bad check":                   append(base, "--check", "./no-such-check"),
		"no --out":                    base[:len(base)-2],
		"recorded agent":              append(base, "--agent", "recorded"),
		"missing REPL file":           append(base, "--mutate", "x.md="+filepath.Join(s.Root, "missing.md")),
		"--more, no experiment":       append(base, "--more", "2"),
		"--more 0":                    append(base, "--more", "0"),
		"--more with --replicas":      append(base, "--more", "2", "--replicas", "3"),
		"--more with --until-decided": append(base, "--more", "2", "--until-decided"),
		"--new-experiment":            append(base, "--replicas", "2", "--new-experiment"),
	}
	for name, args := range cases {
		r := s.Run(t, s.Root, args...)
		assert.Equal(t, 2, r.Code, "%s: %s", name, r.Stderr)
		assert.NotContains(t, r.Stderr, "panic", name)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%s wrote %s", name, out)
	}
}

func TestCorpusErrorIsARow(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 1)
	require.NoError(t, os.MkdirAll(filepath.Join(s.Root, "runs", "z", "project"), 0o755))
	out := filepath.Join(s.Root, "corpus-out")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "1", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc corpusDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.Len(t, doc.Rows, 2)
	assert.Nil(t, doc.Rows[1].Decision)
	assert.Contains(t, doc.Rows[1].Error, "Manifest not found")
	assert.Equal(t, 1, doc.Aggregate.Decisions["error"])
	assert.Contains(t, []string{"reject", "undecided"}, doc.Aggregate.Verdict, "a corpus with an error row is never adopted nor skipped")
}

// TestCorpusUntilDecidedRunsAFixedDesign: with --until-decided --max-replicas M,
// every pipeline of a corpus runs M replicas per arm at one look, whatever its own
// data say, so the stratified test's strata have sizes fixed in advance.
func TestCorpusUntilDecidedRunsAFixedDesign(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 2)
	out := filepath.Join(s.Root, "corpus-out")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "1", "--until-decided", "--max-replicas", "3", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Aggregate struct {
			BaselinePass struct{ N int } `json:"baseline_pass"`
		} `json:"aggregate"`
		Rows []struct {
			Decision *struct {
				Verdict string `json:"verdict"`
				Pairs   int    `json:"pairs"`
			} `json:"decision"`
		} `json:"pipelines"`
		CorpusRule string `json:"corpus_rule"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.Len(t, doc.Rows, 2)
	for _, row := range doc.Rows {
		require.NotNil(t, row.Decision)
		assert.Equal(t, 3, row.Decision.Pairs, "each pipeline runs --max-replicas per arm")
		assert.NotEqual(t, "", row.Decision.Verdict, "every pipeline has a decision")
	}
	assert.Equal(t, 6, doc.Aggregate.BaselinePass.N)
	assert.NotContains(t, r.Stderr, "Undecided at ")
	assert.Contains(t, doc.CorpusRule, "with --until-decided, --max-replicas")
}

// TestCorpusPipelinesOfOneNameAreIndependent: the pipelines of a corpus are
// independent strata for the seeded simulated agent even when their project
// directories have the same name and their runs the same session (runs/a/project
// and runs/b/project, copies of one recorded run): were their draws the same,
// every pair would count twice and a no-op corpus would be decided far more
// often than alpha (issue 40).
func TestCorpusPipelinesOfOneNameAreIndependent(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 2)
	require.Equal(t, filepath.Base(ps[0].Project), filepath.Base(ps[1].Project), "the fixture names both projects alike")
	out := filepath.Join(s.Root, "corpus-out")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "3", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Rows []struct {
			Baseline struct{ Metric []float64 } `json:"baseline_replicas"`
			Mutated  struct{ Metric []float64 } `json:"mutated_replicas"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.Len(t, doc.Rows, 2)
	assert.NotEqual(t, doc.Rows[0].Baseline.Metric, doc.Rows[1].Baseline.Metric, "the baseline replicas of two pipelines are not copies")
	assert.NotEqual(t, doc.Rows[0].Mutated.Metric, doc.Rows[1].Mutated.Metric, "the mutated replicas of two pipelines are not copies")
}

// TestCorpusMoreExtendsTheExperiment: --more N continues the corpus experiment
// --out holds: every pipeline's replicated experiment gets N more replicas per
// arm (the earlier ones kept, the new ones at the next indices) and the corpus
// decides over all of them.
func TestCorpusMoreExtendsTheExperiment(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 2)
	out := filepath.Join(s.Root, "corpus-out")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--replicas", "2", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	type sessions struct {
		ReplicasPerArm int `json:"replicas_per_arm"`
		Continued      int `json:"continued"`
		Aggregate      struct {
			BaselinePass struct{ N int } `json:"baseline_pass"`
		} `json:"aggregate"`
		Rows []struct {
			Replicas int                        `json:"replicas_per_arm"`
			Baseline struct{ Metric []float64 } `json:"baseline_replicas"`
		} `json:"pipelines"`
	}
	var first, doc sessions
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &first), r.Stdout)

	r = s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], out), "--more", "2", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	assert.Contains(t, r.Stderr, "adding 2 more per arm (to 4)")
	assert.Equal(t, 4, doc.ReplicasPerArm)
	assert.Equal(t, 2, doc.Continued)
	assert.Equal(t, 8, doc.Aggregate.BaselinePass.N, "decided over every replica of both pipelines")
	require.Len(t, doc.Rows, 2)
	for i, row := range doc.Rows {
		assert.Equal(t, 4, row.Replicas)
		require.Len(t, row.Baseline.Metric, 4)
		assert.Equal(t, first.Rows[i].Baseline.Metric, row.Baseline.Metric[:2], "the earlier replicas are kept, not run again")
	}
	// Each pipeline's own log holds the continued experiment.
	for _, p := range ps {
		logs, err := filepath.Glob(filepath.Join(paths.ProjectRoot(s.Home, p.Project), "*", "*", "replay-ab-replicas.jsonl"))
		require.NoError(t, err)
		require.Len(t, logs, 1)
		data, err := os.ReadFile(logs[0])
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var last struct {
			Continued int               `json:"continued"`
			Replicas  []json.RawMessage `json:"replicas"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
		assert.Equal(t, 2, last.Continued)
		assert.Len(t, last.Replicas, 8)
	}
	md, err := os.ReadFile(filepath.Join(out, "corpus-result.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "4 per arm per pipeline (the experiment continued from 2 with --more)")
}
