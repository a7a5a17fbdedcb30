package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultFiles reads the corpus result files of dir.
func resultFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range []string{"corpus-result.json", "corpus-result.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		got[f] = string(b)
	}
	return got
}

// markdownOf is the report part of a corpus command's stdout (without the line
// that says where the files are).
func markdownOf(stdout string) string {
	i := strings.LastIndex(stdout, "\nResult written to ")
	if i < 0 {
		return stdout
	}
	return stdout[:i]
}

// saveCorpus copies the sandbox's pipelines and HOME aside and returns the function
// that puts them back: a replay changes a run (its reports, forks and
// recordings), so a second replay of the same pipelines starts from the same
// state only after a restore, at the same paths.
func saveCorpus(t *testing.T, s *Sandbox) func() {
	t.Helper()
	saved := t.TempDir()
	for _, d := range []string{"runs", "home"} {
		require.NoError(t, os.CopyFS(filepath.Join(saved, d), os.DirFS(filepath.Join(s.Root, d))))
	}
	return func() {
		for _, d := range []string{"runs", "home"} {
			require.NoError(t, os.RemoveAll(filepath.Join(s.Root, d)))
			require.NoError(t, os.CopyFS(filepath.Join(s.Root, d), os.DirFS(filepath.Join(saved, d))))
		}
	}
}

// TestCorpusShardsMergeToTheSingleRun runs a corpus of two pipelines whole, then
// as two shards into a directory store, and merges them. Two pipelines (one per
// shard) keep the four corpus runs under the race detector short; a shard of
// several pipelines is e2e's TestCorpusShardProcessesOnS3MergeToTheSingleRun (4
// pipelines, 3 shards).
func TestCorpusShardsMergeToTheSingleRun(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 2)
	stricter(t, ps[0], "stricter.md")
	restore := saveCorpus(t, s)
	single := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], filepath.Join(s.Root, "single")), "--replicas", "1")...)
	require.Equal(t, 0, single.Code, single.Stderr)
	want := resultFiles(t, filepath.Join(s.Root, "single"))
	restore()

	storeDir := filepath.Join(s.Root, "store")
	require.NoError(t, os.MkdirAll(storeDir, 0o755))
	for _, k := range []int{2, 1} {
		r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], filepath.Join(s.Root, fmt.Sprint("shard", k))),
			"--replicas", "1", "--shard", fmt.Sprintf("%d/2", k), "--to", storeDir)...)
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Contains(t, r.Stdout, fmt.Sprintf("Shard %d/2 of corpus run ", k))
		assert.Contains(t, r.Stdout, "replay corpus report --from "+storeDir)
		assert.Contains(t, r.Stderr, fmt.Sprintf("[shard %d/2: 1/", k))
	}
	merged := s.Run(t, s.Root, "corpus", "report", "--from", storeDir, "--out", "merged", "--now", now(ps[0]))
	require.Equal(t, 0, merged.Code, merged.Stderr)
	assert.Equal(t, want, resultFiles(t, filepath.Join(s.Root, "merged")), "the merged result files are the single run's, byte for byte")
	assert.Equal(t, markdownOf(single.Stdout), markdownOf(merged.Stdout))
	assert.Contains(t, merged.Stdout, "Result written to "+filepath.Join(s.Root, "merged", "corpus-result.json"))
	js := s.Run(t, s.Root, "corpus", "report", "--from", storeDir, "--now", now(ps[0]), "--json")
	require.Equal(t, 0, js.Code, js.Stderr)
	assert.JSONEq(t, want["corpus-result.json"], js.Stdout)

	gate := s.Run(t, s.Root, "gate", "--result", filepath.Join(s.Root, "merged", "corpus-result.json"), "--fail-on", "reject")
	assert.NotEqual(t, 2, gate.Code, gate.Stderr)

	// A shard without --to keeps its result in --out, which report reads as a store.
	restore()
	local := filepath.Join(s.Root, "local")
	r := s.Run(t, s.Root, append(corpusArgs(t, s, ps[0], local), "--replicas", "1", "--shard", "1/1")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	merged = s.Run(t, s.Root, "corpus", "report", "--from", "local", "--out", "merged1", "--now", now(ps[0]))
	require.Equal(t, 0, merged.Code, merged.Stderr)
	assert.Equal(t, want, resultFiles(t, filepath.Join(s.Root, "merged1")))
	_, err := os.Stat(filepath.Join(local, "corpus-result.json"))
	assert.True(t, os.IsNotExist(err), "a shard writes no corpus result of its slice")

	// A missing shard: refused, naming it, nothing written.
	require.NoError(t, os.Remove(filepath.Join(local, strings.TrimSpace(findShardObject(t, local)))))
	miss := s.Run(t, s.Root, "corpus", "report", "--from", local, "--out", "merged2")
	assert.Equal(t, 1, miss.Code, miss.Stderr)
	assert.Contains(t, miss.Stderr, "no corpus shards in "+local)
	_, err = os.Stat(filepath.Join(s.Root, "merged2"))
	assert.True(t, os.IsNotExist(err))
}

// findShardObject is the relative path of the one shard object under dir.
func findShardObject(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "corpus", "*", "shard-*.json"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	rel, err := filepath.Rel(dir, m[0])
	require.NoError(t, err)
	return rel
}

func TestCorpusShardBadInput(t *testing.T) {
	t.Parallel()
	s, ps := corpusSandbox(t, 1)
	out := filepath.Join(s.Root, "corpus-out")
	storeDir := filepath.Join(s.Root, "store")
	require.NoError(t, os.MkdirAll(storeDir, 0o755))
	base := corpusArgs(t, s, ps[0], out)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{append(base, "--shard", "5/4", "--to", storeDir), 2, `--shard "5/4": K is between 1 and N (4)`},
		{append(base, "--shard", "0/3", "--to", storeDir), 2, `--shard "0/3": K is between 1 and N`},
		{append(base, "--shard", "a/b", "--to", storeDir), 2, `--shard "a/b": K and N are whole numbers`},
		{append(base, "--shard", "1/0", "--to", storeDir), 2, `--shard "1/0": N is at least 1`},
		{append(base, "--to", storeDir), 2, "--to URL needs --shard K/N"},
		{append(base, "--shard", "1/2", "--to", "ftp://host/x"), 2, "unknown scheme"},
		{append(base, "--shard", "1/2", "--to", filepath.Join(s.Root, "no-store")), 1, "no such directory"},
		{[]string{"corpus", "report"}, 2, "--from URL is required"},
		{[]string{"corpus", "report", "--from", filepath.Join(s.Root, "no-store")}, 1, "no such directory"},
		{[]string{"corpus", "report", "--from", storeDir}, 1, "no corpus shards in " + storeDir},
		{[]string{"corpus", "report", "--from", storeDir, "--settings-key", "../up"}, 2, "not a run key"},
	}
	for _, c := range cases {
		r := s.Run(t, s.Root, c.args...)
		assert.Equal(t, c.code, r.Code, "%v: %s", c.args, r.Stderr)
		assert.Contains(t, r.Stderr, c.want, "%v", c.args)
		first, _, _ := strings.Cut(r.Stderr, "\n")
		assert.Contains(t, first, c.want, "the error is one line: %q", r.Stderr)
		assert.NotContains(t, r.Stderr, "panic")
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%v wrote %s", c.args, out)
		entries, err := os.ReadDir(storeDir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%v wrote into the store", c.args)
	}
}
