package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoFollowUpsRunAsPrinted runs the demo twice, in its temp dir and kept
// with --dir: checks the temp-dir tour's steps and that it removes its temp
// dir, the kept tour's closing lines and that both tours are the same from the
// time travel on, then runs every line of the kept tour's "Look further"
// section in a shell, as a user would paste them. (The demo's code runs in
// process, under the race detector, in cli's TestDemoShortFormGolden.)
func TestDemoFollowUpsRunAsPrinted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	s := NewSandbox(t)
	r := s.Run(t, "", "demo", "--verbose")
	require.Equal(t, 0, r.Code, r.Stderr)
	for _, want := range []string{"# replay demo", "## Step 1 of 10: Which pipelines crashed?", "# Replay Plan (dry-run)", "===COMPRESSION_STATE===", "replay demo --keep",
		"## Step 6 of 10: Time travel", "# State at seq 15", "## Step 7 of 10: Fork with a substituted verdict", "seq 15 answered by verdict-fail.txt",
		"## Step 8 of 10: The tree of runs", "fork at seq 15, substitutes seq 15: the reviewer fails task 1",
		"## Step 9 of 10: The fork against its parent", "- Seq 15 (build-reviewer, phase 3, task 1)", "Verdict FAIL. Task 1 rejected"} {
		assert.Contains(t, r.Stdout, want)
	}
	assert.NotContains(t, r.Stdout, "## Look further", "no follow-up commands for an example that is gone")
	assert.Contains(t, r.Stdout, "\n---\n\n## Step 4 of 10: Resume\n", "off a terminal, a rule sets each step apart from its command's own sections")
	entries, err := os.ReadDir(s.Tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the demo removes its temp dir without --keep")

	// The kept example lives in a directory whose path is as long as the temp one
	// (the reports count characters of paths), so the two tours can be compared.
	root, _, ok := strings.Cut(strings.TrimPrefix(r.Stdout, "# replay demo\n\nBuilt a crashed build pipeline in "), ":\n")
	require.True(t, ok, r.Stdout)
	sandbox := filepath.Dir(filepath.Dir(root))
	dir := filepath.Join(sandbox, strings.Repeat("k", len(root)-len(sandbox)-1))
	r2 := s.Run(t, "", "demo", "--verbose", "--dir", dir)
	require.Equal(t, 0, r2.Code, r2.Stderr)
	_, err = os.Stat(filepath.Join(dir, "project", ".git"))
	assert.NoError(t, err, "--dir keeps the example")
	assert.Contains(t, r2.Stdout, "## Look further")
	assert.Contains(t, r2.Stdout, "## Step 10 of 10: Replicated A/B replay with a decision")
	assert.Contains(t, r2.Stdout, "'builtin:sim?flake=0.05&seed=7'", "the printed command can be pasted into a shell")
	assert.Contains(t, r2.Stdout, "## Decision: REJECT\n\nStep 1 of the rule: the mutated arm passes 0/14", "14 pairs reach the anytime-valid threshold on the pass rate")

	// From the time travel on (the fork, its diff, the replicated A/B replay) the tour
	// is the same on every run (--now, seeds), kept or not; only the closing lines
	// differ.
	norm := func(out, root string) string {
		out = out[strings.Index(out, "## Step 6 of 10: "):]
		for _, end := range []string{"\n## Look further\n", "\nThe example was removed;"} {
			out, _, _ = strings.Cut(out, end)
		}
		out = strings.ReplaceAll(out, root, "$DIR")
		return regexp.MustCompile(`projects/[0-9a-f]+/`).ReplaceAllString(out, "projects/$$H/")
	}
	assert.Equal(t, norm(r.Stdout, root), norm(r2.Stdout, dir))

	_, block, ok := strings.Cut(r2.Stdout, "## Look further\n\n")
	require.True(t, ok, r2.Stdout)
	block, _, _ = strings.Cut(block, "\n\n")
	lines := strings.Split(block, "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	assert.Contains(t, lines[1], binPath+" checkpoint list", "the binary is not on PATH: its own path is printed")
	assert.NotContains(t, block, "export ", "the follow-ups never re-home the user's shell")
	ab := regexp.MustCompile(`# A/B replay (\S+) of session`).FindStringSubmatch(r2.Stdout)
	require.NotNil(t, ab, "step 5 shows an A/B session")
	script := "set -e\n" + strings.Join(lines, "\n") + "\n"
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "pre-wave-2")
	assert.Contains(t, string(out), `"resume_point"`)
	assert.Contains(t, string(out), "# Replay Diff")
	assert.Contains(t, string(out), " vs "+ab[1]+"\n", "replay diff picks the A/B session the demo showed, not a replica")
}
