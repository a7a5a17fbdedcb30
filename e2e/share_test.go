package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/s3test"
)

// TestPushPullThroughS3: the built binary pushes a run to a real S3 server from
// two processes at once, a second sandbox (another HOME: another machine)
// pulls it, and status and plan read the pulled run as they read the original.
func TestPushPullThroughS3(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "team-runs")
	url := srv.URL("team-runs", "replay")
	s, p := pipelineSandbox(t)
	s.Env = append(srv.Env(), "AWS_EC2_METADATA_DISABLED=true")

	var wg sync.WaitGroup
	results := make([]Result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Run(t, p.Project, "push", p.Scratch, "--to", url)
		}()
	}
	wg.Wait()
	for _, r := range results {
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Regexp(t, `^pushed run `+p.SessionID+`-[0-9a-f]{12} to s3://team-runs/replay: `, r.Stdout)
	}
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", url)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, " 0 new objects")

	other := NewSandbox(t)
	other.Env = s.Env
	r = other.Run(t, "", "pull", url, "--list")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `^1 run in s3://team-runs/replay\n`+p.SessionID+`-[0-9a-f]{12}\n$`, r.Stdout)
	into := filepath.Join(other.Root, "shared-run")
	r = other.Run(t, p.Project, "pull", url, "--into", into)
	require.Equal(t, 0, r.Code, r.Stderr)
	m := regexp.MustCompile(`--scratch (\S+)`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	for _, cmd := range [][]string{{"status", p.Project, "--scratch"}, {"plan"}} {
		orig := s.Run(t, p.Project, append(cmd, p.Scratch, "--now", now(p))...)
		got := other.Run(t, p.Project, append(cmd, m[1], "--now", now(p))...)
		require.Equal(t, 0, got.Code, got.Stderr)
		// On another machine the marker names a live dispatch dir of the first
		// one: the plan warns and reads the durable copy; all else is the same.
		want, _, _ := strings.Cut(orig.Stdout, "## Warnings")
		have, _, _ := strings.Cut(strings.ReplaceAll(got.Stdout, filepath.Dir(m[1]), filepath.Dir(p.Scratch)), "## Warnings")
		assert.Equal(t, want, have, "%v", cmd)
	}
}

// TestPushPullBadStoreThroughTheBinary: a store that cannot be used is one
// error line and a non-zero exit, and nothing is written.
func TestPushPullBadStoreThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "team-runs")
	s, p := pipelineSandbox(t)
	good := append(srv.Env(), "AWS_EC2_METADATA_DISABLED=true")
	before := digest(t, p.Root)
	cases := []struct {
		name string
		env  []string
		url  string
		says string
	}{
		{"wrong secret", append(append([]string{}, good...), "AWS_SECRET_ACCESS_KEY=wrong-secret-123"), srv.URL("team-runs", "x"), "refused the credentials"},
		{"missing bucket", good, srv.URL("no-such-bucket", "x"), `bucket "no-such-bucket" does not exist`},
		{"unreachable", good, "s3://team-runs/x?insecure=1&endpoint=127.0.0.1:1", "cannot reach 127.0.0.1:1"},
	}
	for _, c := range cases {
		s.Env = c.env
		for _, args := range [][]string{{"push", p.Scratch, "--to", c.url}, {"pull", c.url, "--into", filepath.Join(s.Root, "pulled")}} {
			r := s.Run(t, p.Project, args...)
			assert.Equal(t, 1, r.Code, "%s %v: %s", c.name, args, r.Stderr)
			assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "%s: one line: %q", c.name, r.Stderr)
			assert.Contains(t, r.Stderr, c.says, c.name)
			assert.NotContains(t, r.Stderr, "wrong-secret-123")
			assert.NotContains(t, r.Stderr, s3test.SecretKey)
		}
	}
	assert.Equal(t, before, digest(t, p.Root))
	_, err := os.Stat(filepath.Join(s.Root, "pulled"))
	assert.True(t, os.IsNotExist(err))
	entries, err := os.ReadDir(filepath.Join(srv.Root, "team-runs"))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing reached the bucket")
}

// TestConcurrentPushProcessesToADirectory: two replay processes push one run
// into one directory store at once; both succeed and the store holds one whole run.
func TestConcurrentPushProcessesToADirectory(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	var wg sync.WaitGroup
	results := make([]Result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
		}()
	}
	wg.Wait()
	for _, r := range results {
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	r := s.Run(t, p.Project, "pull", storeDir, "--list", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `"runs": \[\s*"`+p.SessionID+`-[0-9a-f]{12}"\s*\]`, r.Stdout)
	r = s.Run(t, p.Project, "pull", storeDir, "--into", filepath.Join(t.TempDir(), "run"))
	require.Equal(t, 0, r.Code, r.Stderr)
	leftovers, err := filepath.Glob(filepath.Join(storeDir, "*", "*", ".tmp*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers)
}
