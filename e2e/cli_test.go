package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoFollowUpsRunAsPrinted keeps the demo's example and runs every line of
// its "Look further" section in a shell, as a user would paste them.
func TestDemoFollowUpsRunAsPrinted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	s := NewSandbox(t)
	dir := filepath.Join(s.Root, "demo")
	r := s.Run(t, "", "demo", "--dir", dir)
	require.Equal(t, 0, r.Code, r.Stderr)
	_, block, ok := strings.Cut(r.Stdout, "## Look further\n\n")
	require.True(t, ok, r.Stdout)
	block, _, _ = strings.Cut(block, "\n\n")
	lines := strings.Split(block, "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	assert.Contains(t, lines[1], binPath+" checkpoint list", "the binary is not on PATH: its own path is printed")
	script := "set -e\n" + strings.Join(lines, "\n") + "\n"
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "pre-wave-2")
	assert.Contains(t, string(out), `"resume_point"`)
	assert.Contains(t, string(out), "# Replay Diff")
}
