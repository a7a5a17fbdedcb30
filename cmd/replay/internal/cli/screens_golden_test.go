package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// screenWidth is the terminal width the screen goldens are drawn for.
const screenWidth = 100

// TestScreensGolden pins what a user reads on a terminal of 100 columns, drawn by
// the root command the binary runs (in this process, --format text as on a
// terminal, COLUMNS=100) on the demo's crashed example: status, plan, plan
// --explain, the resume's hand-off and its re-dispatch, and an A/B replay with its
// --diff section. Every table line is at most 100 columns wide. Refresh with
// go test ./cmd/replay/internal/cli/ -run TestScreensGolden -update.
func TestScreensGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// args returns the command line on the example p.
		args func(t *testing.T, p *fixture.Pipeline) []string
	}{
		{"status", func(_ *testing.T, p *fixture.Pipeline) []string { return []string{"status"} }},
		{"plan", func(_ *testing.T, p *fixture.Pipeline) []string { return []string{"plan", p.Scratch} }},
		{"plan-explain", func(_ *testing.T, p *fixture.Pipeline) []string { return []string{"plan", p.Scratch, "--explain"} }},
		{"resume-handoff", func(_ *testing.T, p *fixture.Pipeline) []string { return []string{p.Scratch, "--yes"} }},
		{"resume-redispatch", func(_ *testing.T, p *fixture.Pipeline) []string {
			return []string{p.Scratch, "--yes", "--agent", "builtin:sim"}
		}},
		{"ab-diff", func(t *testing.T, p *fixture.Pipeline) []string {
			return []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + stricter(t, p, "stricter.md"),
				"--templates", p.Templates, "--diff", "--agent", "builtin:sim"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			s.Env = []string{"COLUMNS=100"}
			args := append(tt.args(t, p), "--format", "text", "--now", now(p))
			r := s.Run(t, p.Project, args...)
			require.Equal(t, 0, r.Code, r.Stderr)
			for i, line := range strings.Split(r.Stdout, "\n") {
				if strings.HasPrefix(line, "|") || strings.HasPrefix(line, "+") {
					assert.LessOrEqual(t, runewidth.StringWidth(line), screenWidth, "table line %d is wider than %d: %q", i+1, screenWidth, line)
				}
			}
			assert.NotContains(t, r.Stdout, "|:--", "no markdown table on a terminal")
			checkGolden(t, filepath.Join("testdata", "screens", tt.name+".golden.txt"), normaliseScreen(r.Stdout, p))
		})
	}
}

// normaliseScreen replaces what depends on where the test runs: the example's
// root and the project hash that follows from its path.
func normaliseScreen(out string, p *fixture.Pipeline) string {
	out = strings.ReplaceAll(out, p.Root, "<root>")
	return regexp.MustCompile(`[0-9a-f]{16}`).ReplaceAllString(out, "<hash16>")
}

// checkGolden compares got with the golden file at path, rewriting it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to write %s", path)
	assert.Equal(t, string(want), got)
}
