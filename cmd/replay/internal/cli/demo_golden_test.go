package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoShortFormGolden pins the default demo's text at COLUMNS=100: no line
// wider than 100 (but the two that name the example's and the binary's path), at most 150 lines, the decision in the last lines. Refresh
// with go test ./cmd/replay/internal/cli/ -run TestDemoShortFormGolden -update.
func TestDemoShortFormGolden(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	s.Env = []string{"COLUMNS=100"}
	r := s.Run(t, "", "demo")
	require.Equal(t, 0, r.Code, r.Stderr)
	out := r.Stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  DEMO=") || strings.HasPrefix(l, "  replay is ") {
			continue // the example's path and the binary's, whole so they can be pasted
		}
		assert.LessOrEqual(t, len([]rune(l)), 100, "line %d is wider than 100: %q", i+1, l)
	}
	assert.LessOrEqual(t, len(lines), 150)
	tail := strings.Join(lines[len(lines)-8:], "\n")
	assert.Contains(t, tail, "Decision: ", "the decision is on the last screen")
	assert.NotContains(t, out, "Wall clock", "no wall clock of the simulated agent")
	assert.Contains(t, out, "Next seq is 21, not 20", "the next seq is explained")

	// The example's root and the test binary's path are the only lines that
	// depend on where the test runs; the project's hash follows from its path.
	out = regexp.MustCompile(`(?m)^  DEMO=.*$`).ReplaceAllString(out, "  DEMO=<root>")
	out = regexp.MustCompile(`(?m)^  replay is .*$`).ReplaceAllString(out, "  replay is <binary>")
	out = regexp.MustCompile(`[0-9a-f]{16}`).ReplaceAllString(out, "<hash16>")
	golden := filepath.Join("testdata", "demo-short.golden.txt")
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to write %s", golden)
	assert.Equal(t, string(want), out)
}
