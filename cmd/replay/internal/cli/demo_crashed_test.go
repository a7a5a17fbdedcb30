package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoCrashedLeavesTheExampleCrashed: `demo --crashed DIR` builds the example
// without the tour (the partial commit is still there, nothing restored), prints
// the variables that point replay at it, and with only those variables, HOME
// and TMPDIR left as the user's own, replay finds the crashed run and plans
// next seq 21 from the project.
func TestDemoCrashedLeavesTheExampleCrashed(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := filepath.Join(s.Root, "example")
	r := s.Run(t, "", "demo", "--crashed", dir)
	require.Equal(t, 0, r.Code, r.Stderr)
	project := filepath.Join(dir, "project")
	assert.Contains(t, r.Stdout, "\n  cd "+project+"\n")
	assert.Contains(t, r.Stdout, "\n  claude \"/replay\"\n")
	assert.NotContains(t, r.Stdout, "HOME="+filepath.Join(dir, "home")+" claude", "claude keeps the user's HOME")
	assert.NotContains(t, r.Stdout, "## Step", "no tour")
	assert.FileExists(t, filepath.Join(project, "internal", "audit", "log.go"), "the partial commit of task 3 is still in the tree")

	m := regexp.MustCompile(`(?m)^  export (.+)$`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	vars := strings.Fields(m[1])
	assert.Equal(t, []string{"REPLAY_HOME=" + filepath.Join(dir, "home"), "REPLAY_TMPDIR=" + filepath.Join(dir, "tmp"),
		"REPLAY_SYSTEM_TMP=" + filepath.Join(dir, "systmp")}, vars)

	// The user's own HOME and TMPDIR (the sandbox's) hold no pipeline: replay
	// finds the example only through the printed variables.
	r = s.Run(t, project, "plan", "--json")
	assert.NotEqual(t, 0, r.Code, "without the variables there is no crashed run here")
	s.Env = vars
	r = s.Run(t, project, "plan", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var plan struct {
		NextSeq     int    `json:"next_seq"`
		ResumePoint string `json:"resume_point"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &plan))
	assert.Equal(t, 21, plan.NextSeq)
	assert.Contains(t, plan.ResumePoint, "pre-wave-2")
	entries, err := os.ReadDir(s.Home)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written to the user's HOME")
}

func TestDemoCrashedRefusesAFullDirAndOtherFlags(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	full := filepath.Join(s.Root, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644))
	r := s.Run(t, "", "demo", "--crashed", full)
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "not empty")
	r = s.Run(t, "", "demo", "--crashed", filepath.Join(s.Root, "x"), "--keep")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "without --dir or --keep")
	assert.NoDirExists(t, filepath.Join(s.Root, "x"))
}
