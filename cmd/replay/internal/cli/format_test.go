package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// runSized runs replay in the sandbox's project with stdout a terminal of width
// columns (0: not a terminal) and env as the environment besides HOME.
func (sb *cpSandbox) runSized(t *testing.T, width int, env map[string]string, args ...string) cpRun {
	t.Helper()
	ios, _, out, errOut := testtools.Streams()
	ios.SetTTY(width > 0)
	ios.SetWidth(width)
	all := map[string]string{"HOME": sb.home, "REPLAY_PROMPT_DISABLED": "1"}
	for k, v := range env {
		all[k] = v
	}
	ios.SetEnv(func(k string) string { return all[k] })
	f := &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return &prompt.Scripted{} },
		Getenv:    func(k string) string { return all[k] },
		Getwd:     func() (string, error) { return sb.project, nil },
		Clock:     func() time.Time { return time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC) },
	}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	code := Execute(f, cmd)
	return cpRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestTablesFollowTerminalAndFormat(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	long := "pre-wave-2 " + strings.Repeat("with a reason far longer than any terminal ", 4)
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", long)
	require.Equal(t, 0, r.code, r.stderr)

	tests := []struct {
		name     string
		width    int
		env      map[string]string
		args     []string
		first    string // the table's first line starts with this
		maxWidth int    // 0: no limit
	}{
		{name: "terminal: text grid wrapped to its width", width: 60, first: "+--", maxWidth: 60},
		{name: "terminal with --format markdown: never cut", width: 60, args: []string{"--format", "markdown"}, first: "| HASH"},
		{name: "pipe: markdown, no limit", first: "| HASH"},
		{name: "pipe with COLUMNS: markdown, never cut", env: map[string]string{"COLUMNS": "70"}, first: "| HASH"},
		{name: "pipe with --format text and COLUMNS", env: map[string]string{"COLUMNS": "70"}, args: []string{"--format", "text"}, first: "+--", maxWidth: 70},
		{name: "pipe with --format text", args: []string{"--format", "text"}, first: "+--"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sb.runSized(t, tt.width, tt.env, append([]string{"checkpoint", "list"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, tt.first), r.stdout)
			assert.NotContains(t, r.stdout, "…", "tables keep their content")
			if tt.maxWidth == 0 {
				if tt.first == "| HASH" {
					assert.Contains(t, r.stdout, strings.TrimSpace(long))
				}
				return
			}
			for _, w := range strings.Fields(long) {
				assert.Contains(t, r.stdout, w)
			}
			for _, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
				assert.LessOrEqual(t, runewidth.StringWidth(line), tt.maxWidth, line)
			}
		})
	}
}

func TestFormatFlagRejectsUnknownValue(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.runSized(t, 0, nil, "checkpoint", "list", "--format", "html")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.stderr, `"html" is not a table format; use markdown or text`)
	assert.Empty(t, r.stdout)
}

func TestCheckpointCountsFiles(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr, "--quiet silences the count")

	sb.write(t, "main.go", "package main // edited\n")
	r = sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "checkpoint: hashing 2 of 2 files\n", r.stderr, "off a terminal: one line at the end")

	sb.write(t, "main.go", "package main // edited again\n")
	r = sb.run(t, false, nil, "checkpoint", "restore", "pre-wave-2", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "checkpoint: writing 1 of 1 file\n")
}

func TestVerboseAndQuietMeanTheSameOnPlan(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	now := p.Now.UTC().Format(time.RFC3339)

	plain := runFixture(t, p, false, nil, "plan", p.Scratch, "--now", now)
	require.Equal(t, 0, plain.code, plain.stderr)
	assert.NotContains(t, plain.stderr, "verbose: ")

	verbose := runFixture(t, p, false, nil, "plan", p.Scratch, "--now", now, "--verbose")
	require.Equal(t, 0, verbose.code, verbose.stderr)
	assert.Contains(t, verbose.stderr, "verbose: manifest "+p.ManifestPath+" (session ")
	assert.Contains(t, verbose.stderr, "; shadow ")
	assert.Equal(t, plain.stdout, verbose.stdout, "detail goes to stderr only")

	quiet := runFixture(t, p, false, nil, "plan", p.Scratch, "--now", now, "--quiet", "--verbose")
	assert.Equal(t, 2, quiet.code, "--quiet and --verbose together are a usage error")
	assert.Empty(t, quiet.stdout)
}
