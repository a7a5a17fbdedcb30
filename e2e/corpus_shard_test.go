package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/s3test"
)

// keepCorpus copies the sandbox's pipelines and HOME aside and returns the
// function that puts them back at the same paths (a replay changes a run, so a
// second replay of the corpus starts from the same state only after it).
func keepCorpus(t *testing.T, s *Sandbox) func() {
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

// withOut is a corpus command line of corpusOf with another --out and no --json.
func withOut(args []string, out string, extra ...string) []string {
	var a []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--json":
		case "--out":
			a = append(a, "--out", out)
			i++
		default:
			a = append(a, args[i])
		}
	}
	return append(a, extra...)
}

func flagValue(args []string, name string) string {
	for i, a := range args[:len(args)-1] {
		if a == name {
			return args[i+1]
		}
	}
	return ""
}

func readResult(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range []string{"corpus-result.json", "corpus-result.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		got[f] = string(b)
	}
	return got
}

// TestCorpusShardProcessesOnS3MergeToTheSingleRun runs three shard processes of
// the binary at once against a real S3 server, merges them with corpus report
// and compares the result files with a single-process run's, byte for byte.
func TestCorpusShardProcessesOnS3MergeToTheSingleRun(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "corpora")
	s, args := corpusOf(t, 4)
	// Shards split by pipeline, so one replica per arm shows the merge as well as two.
	args[slices.Index(args, "--replicas")+1] = "1"
	s.Env = append(s.Env, srv.Env()...)
	restore := keepCorpus(t, s)
	single := s.Run(t, s.Root, withOut(args, "single")...)
	require.Equal(t, 0, single.Code, single.Stderr)
	want := readResult(t, filepath.Join(s.Root, "single"))
	restore()

	url := srv.URL("corpora", "ci/replay")
	const n = 3
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for k := 1; k <= n; k++ {
		c := s.Command(s.Root, withOut(args, fmt.Sprint("shard", k), "--shard", fmt.Sprintf("%d/%d", k, n), "--to", url)...)
		outs[k-1] = &bytes.Buffer{}
		c.Stdout, c.Stderr = outs[k-1], outs[k-1]
		require.NoError(t, c.Start())
		cmds[k-1] = c
	}
	for k, c := range cmds {
		require.NoError(t, c.Wait(), "shard %d/%d: %s", k+1, n, outs[k])
		assert.Contains(t, outs[k].String(), fmt.Sprintf("Shard %d/%d of corpus run ", k+1, n))
	}

	merged := s.Run(t, s.Root, "corpus", "report", "--from", url, "--out", "merged", "--now", flagValue(args, "--now"))
	require.Equal(t, 0, merged.Code, merged.Stderr)
	got := readResult(t, filepath.Join(s.Root, "merged"))
	assert.Equal(t, want["corpus-result.md"], got["corpus-result.md"])
	assert.Equal(t, want["corpus-result.json"], got["corpus-result.json"])
	assert.Equal(t, strings.SplitN(single.Stdout, "\nResult written to ", 2)[0], strings.SplitN(merged.Stdout, "\nResult written to ", 2)[0])

	// A corrupt shard object is refused, naming it, and nothing is written.
	objs, err := filepath.Glob(filepath.Join(srv.Root, "corpora", "ci", "replay", "corpus", "*", "shard-2-of-3.json"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	good, err := os.ReadFile(objs[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(objs[0], good[:len(good)/3], 0o644))
	bad := s.Run(t, s.Root, "corpus", "report", "--from", url, "--out", "merged-bad")
	assert.Equal(t, 1, bad.Code, bad.Stderr)
	assert.Contains(t, bad.Stderr, "shard-2-of-3.json: not a corpus shard document")
	assert.Contains(t, bad.Stderr, "run that shard again")
	_, err = os.Stat(filepath.Join(s.Root, "merged-bad"))
	assert.True(t, os.IsNotExist(err), "nothing written")

	// A missing one: named.
	require.NoError(t, os.Remove(objs[0]))
	miss := s.Run(t, s.Root, "corpus", "report", "--from", url)
	assert.Equal(t, 1, miss.Code, miss.Stderr)
	assert.Contains(t, miss.Stderr, "shard 2 of 3 missing (present: 1, 3)")
}

func TestCorpusShardBadStores(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "corpora")
	s, args := corpusOf(t, 1)
	s.Env = append(s.Env, srv.Env()...)
	cases := []struct {
		name, url string
		env       []string
		want      string
	}{
		{"missing bucket", srv.URL("no-such-bucket", "x"), nil, "no-such-bucket"},
		{"unreachable", "s3://corpora/x?endpoint=127.0.0.1:1&insecure=1", nil, "127.0.0.1:1"},
		{"wrong credentials", srv.URL("corpora", "x"), []string{"AWS_SECRET_ACCESS_KEY=wrong-secret-0123456789"}, "corpora"},
	}
	for _, c := range cases {
		sb := *s
		sb.Env = append(append([]string(nil), s.Env...), c.env...)
		r := sb.Run(t, s.Root, withOut(args, "out-"+strings.ReplaceAll(c.name, " ", "-"), "--shard", "1/1", "--to", c.url)...)
		t.Logf("%s: exit %d: %s", c.name, r.Code, r.Stderr)
		assert.NotEqual(t, 0, r.Code, "%s: %s", c.name, r.Stderr)
		assert.Contains(t, r.Stderr, c.want, c.name)
		assert.NotContains(t, r.Stderr, "replaying...", "%s: nothing runs", c.name)
		assert.NotContains(t, r.Stderr, "panic", c.name)
		rep := sb.Run(t, s.Root, "corpus", "report", "--from", c.url)
		assert.NotEqual(t, 0, rep.Code, "%s: %s", c.name, rep.Stderr)
		assert.Contains(t, rep.Stderr, c.want, c.name)
	}
	entries, err := os.ReadDir(filepath.Join(srv.Root, "corpora"))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was put")
}
