package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownCommandsAndBadValuesExit2(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"checkpoint", "lst"}, "did you mean list?"},
		{[]string{"manifest", "bogus"}, `unknown command "bogus" for "replay manifest"`},
		{[]string{"checkpoint", "restor", "x", "--yes"}, "did you mean restore?"},
		{[]string{"stats"}, "did you mean state or status?"},
		{[]string{"--quiet", "--verbose", "plan"}, "--quiet and --verbose cannot be used together"},
		{[]string{"checkpoint", "restore", "x", "--yes=no"}, "a switch takes no value"},
		{[]string{"demo", "--json"}, "no JSON form"},
		{[]string{"plan", "--profile", "biuld"}, "built-in profiles: build, debugging, siege"},
	}
	for _, tt := range tests {
		r := s.Run(t, "", tt.args...)
		assert.Equal(t, 2, r.Code, "%v: %s", tt.args, r.Stderr)
		assert.Contains(t, r.Stderr, tt.want, "%v", tt.args)
		assert.Empty(t, r.Stdout, "%v: help is not printed on a usage error", tt.args)
		assertNoPanic(t, r)
	}
	// The other side: a group without a subcommand shows its help, exit 0.
	r := s.Run(t, "", "checkpoint")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Examples:")
	assert.Contains(t, r.Stdout, "EXIT STATUS")
}

func TestVersionJSONThroughCLI(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	r := s.Run(t, "", "version", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &v), r.Stdout)
	assert.NotEmpty(t, v["version"])
	assert.Contains(t, v, "vcs_modified")
}

func TestMisspelledMutationChangesNothing(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("# stricter\n"), 0o644))
	before := digest(t, p.Root)
	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reveiwer-prompt.md="+repl, "--agent", "builtin:sim", "--diff", "--now", now(p))
	assert.Equal(t, 2, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `template "build-reveiwer-prompt.md" is unknown: no dispatch of the run uses it`)
	assert.Contains(t, r.Stderr, "the run uses build-reviewer, ")
	assert.Equal(t, before, digest(t, p.Root), "nothing written")

	r = s.Run(t, p.Project, "plan", p.Scratch, "--mutate", "build-reveiwer-prompt.md="+repl, "--now", now(p))
	assert.Equal(t, 2, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "FAIL: --mutate build-reveiwer-prompt.md=")

	r = s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", filepath.Join(p.Root, "no-such-dir"), "--agent", "builtin:sim", "--now", now(p))
	assert.Equal(t, 2, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "no-such-dir: not a directory")
	assert.Equal(t, before, digest(t, p.Root), "nothing written")
}

func TestABReplayJSONIsOneDocument(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("# stricter\n- Every public function must have a test.\n"), 0o644))
	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates, "--agent", "builtin:sim", "--diff", "--json", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Session    string            `json:"session"`
		Mutations  []string          `json:"mutations"`
		Redispatch []json.RawMessage `json:"redispatch"`
		Diff       struct {
			Type          string `json:"type"`
			ReplaySession string `json:"replay_session"`
		} `json:"diff"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	require.NoError(t, dec.Decode(&doc), r.Stdout)
	assert.False(t, dec.More(), "one JSON document on stdout")
	assert.NotEmpty(t, doc.Session)
	assert.NotEmpty(t, doc.Redispatch)
	assert.Equal(t, "replay-diff", doc.Diff.Type)
	assert.Equal(t, doc.Session, doc.Diff.ReplaySession)

	// diff --session completes the recorded session, and diff needs no PATH in the project.
	c := s.Run(t, p.Project, "__complete", "diff", "--session", "")
	require.Equal(t, 0, c.Code, c.Stderr)
	assert.Contains(t, c.Stdout, doc.Session+"\treplay of ")
	d := s.Run(t, p.Project, "diff", "--session", doc.Session, "--now", now(p))
	require.Equal(t, 0, d.Code, d.Stderr)
	assert.Contains(t, d.Stdout, "# Replay Diff")
}

func TestCompletionThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, "__complete", "checkpoint", "show", "")
	require.Equal(t, 0, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.Len(t, lines, len(p.Checkpoints)+1, r.Stdout)
	assert.Contains(t, r.Stdout, p.Checkpoints[len(p.Checkpoints)-1].Hash.String()[:8]+"\t")
	assert.Contains(t, r.Stdout, "\tpre-wave-2\n")
	assert.Equal(t, ":36", lines[len(lines)-1])
	r = s.Run(t, p.Project, "__complete", "")
	assert.Contains(t, r.Stdout, "status\t")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(r.Stdout), ":0"), "PATH completes files: %s", r.Stdout)
	r = s.Run(t, p.Project, "__complete", "status", "")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(r.Stdout), ":16"), "DIR completes directories: %s", r.Stdout)
}
