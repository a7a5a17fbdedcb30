package cli_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// replicasArgs are the arguments of a replicated A/B replay of p's fixture with a
// stricter reviewer template.
func replicasArgs(t *testing.T, p *fixture.Pipeline, extra ...string) []string {
	t.Helper()
	repl := stricter(t, p, "stricter.md")
	args := []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates,
		"--agent", "builtin:sim?flake=0.05&seed=7", "--now", now(p)}
	return append(args, extra...)
}

// replicasJSON is the part of the --json document the tests read.
type replicasJSON struct {
	Decision struct {
		Verdict string `json:"verdict"`
		Step    int    `json:"step"`
	} `json:"decision"`
	RuleText string `json:"rule_text"`
	Replicas []struct {
		Arm        string `json:"arm"`
		Session    string `json:"session"`
		Worktree   string `json:"worktree"`
		Passed     bool   `json:"passed"`
		CheckExit  *int   `json:"check_exit"`
		Dispatches []struct {
			Reused bool `json:"reused"`
		} `json:"dispatches"`
	} `json:"replicas"`
}

func TestReplicatedABReplayReportIsDeterministic(t *testing.T) {
	t.Parallel()
	run := func(jobs string) (string, *fixture.Pipeline) {
		s, p := pipelineSandbox(t)
		before := captureUserState(t, p)
		r := s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "4", "--jobs", jobs)...)
		require.Equal(t, 0, r.Code, r.Stderr)
		assertUntouched(t, p, before)
		out := strings.ReplaceAll(r.Stdout, p.Root, "$ROOT")
		return regexp.MustCompile(`projects/[0-9a-f]+/`).ReplaceAllString(out, "projects/$$H/"), p
	}
	one, p := run("1")
	two, _ := run("2")
	assert.Equal(t, one, strings.Replace(two, "(2 at once)", "(1 at once)", 1), "--jobs 2 gives the same replicas and report as --jobs 1")
	assert.Contains(t, one, "## Decision: ")
	assert.Contains(t, one, "1. Pass rate worse")
	assertGolden(t, filepath.Join("testdata", "replicas.golden.md"), one)

	dir := filepath.Dir(p.ManifestPath)
	mds, err := filepath.Glob(filepath.Join(dir, "replay-ab-*.md"))
	require.NoError(t, err)
	require.Len(t, mds, 1)
	written, err := os.ReadFile(mds[0])
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(one, strings.ReplaceAll(string(written), p.Root, "$ROOT")), "the written report is the printed one")
	lines, err := os.ReadFile(filepath.Join(dir, "replay-ab-replicas.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(lines), "\n"))
}

func assertGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/cli -run Replicated -update to create %s", path)
	assert.Equal(t, string(want), got)
}

func TestReplicatedABReplayJSONAndCheck(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "2", "--check", "test -f sim/task-1/build-implementer.txt", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc replicasJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.Len(t, doc.Replicas, 4)
	assert.Equal(t, "2. Outcome worse", doc.RuleText[strings.Index(doc.RuleText, "2."):][:16])
	assert.Equal(t, "undecided", doc.Decision.Verdict, "two pairs cannot decide anything")
	sessions := map[string]bool{}
	for i, rep := range doc.Replicas {
		assert.Equal(t, []string{"baseline", "mutated"}[i%2], rep.Arm)
		sessions[rep.Session] = true
		require.NotNil(t, rep.CheckExit, "the check ran")
		assert.Equal(t, *rep.CheckExit == 0, rep.Passed, "the check's exit status is the outcome")
		_, err := os.Stat(filepath.Join(rep.Worktree, "sim/task-1/build-implementer.txt"))
		assert.Equal(t, err == nil, rep.Passed, "the check ran in the replica's own worktree")
		assert.NotEmpty(t, rep.Dispatches)
		for _, d := range rep.Dispatches {
			assert.False(t, d.Reused, "replicas run live, never from recordings")
		}
	}
	assert.Len(t, sessions, 4, "each replica has its own session")
}

func TestReplicatedABReplayUntilDecided(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "1", "--until-decided", "--max-replicas", "4", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc replicasJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	n := len(doc.Replicas) / 2
	assert.GreaterOrEqual(t, n, 1)
	assert.LessOrEqual(t, n, 4)
	if n < 4 {
		assert.NotEqual(t, "undecided", doc.Decision.Verdict)
	}

	// Nothing can decide before 9 pairs: replicas are added up to the maximum,
	// and the experiment ends undecided, saying so.
	r = s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "1", "--until-decided", "--max-replicas", "5", "--check", "true", "--new-experiment", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	n = len(doc.Replicas) / 2
	assert.Equal(t, 5, n)
	assert.Contains(t, r.Stderr, "Undecided at 1 replicas per arm")
	assert.Equal(t, "undecided", doc.Decision.Verdict)
	assert.NotContains(t, r.Stdout+r.Stderr, "planned")

	// The same command again continues the experiment: 5 more pairs, indices 6 to 10.
	r = s.Run(t, p.Project, replicasArgs(t, p, "--more", "2", "--check", "true", "--until-decided", "--max-replicas", "5", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Len(t, doc.Replicas, 14, "--more 2 adds two pairs to the five")
	assert.Contains(t, r.Stderr, "Continuing the experiment: 5 replicas per arm so far")
}

func TestReplicatedABReplayBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	notExec := filepath.Join(p.Root, "check.sh")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	cases := map[string][]string{
		"--replicas 0":          {"--replicas", "0"},
		"not executable":        {"--replicas", "2", "--check", notExec},
		"not on PATH":           {"--replicas", "2", "--check", "no-such-check-program --all"},
		"until-decided too low": {"--replicas", "3", "--until-decided", "--max-replicas", "2"},
		"no --replicas":         {"--check", "true"},
		"unknown metric":        {"--replicas", "2", "--metric", "vibes"},
		"recorded agent":        {"--replicas", "2", "--agent", "recorded"},
		"bad sim spec":          {"--replicas", "2", "--agent", "builtin:sim?flake=2"},
		"with --template-ref":   {"--replicas", "2", "--template-ref", "HEAD"},
	}
	base := replicasArgs(t, p)
	for name, extra := range cases {
		before := digest(t, p.Root)
		r := s.Run(t, p.Project, append(append([]string(nil), base...), extra...)...)
		assert.Equal(t, 2, r.Code, "%s: %s", name, r.Stderr)
		assert.True(t, strings.HasPrefix(r.Stderr, "replay: --"), "%s: one line naming the flag: %s", name, r.Stderr)
		assert.NotContains(t, r.Stderr, "panic", name)
		assert.Equal(t, before, digest(t, p.Root), "%s: nothing written", name)
	}
}
