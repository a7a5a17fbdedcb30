package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
)

// TestMCPABReplicas: the ab tool with replicas runs the replicated A/B replay the
// CLI runs with --replicas (the same decision as TestReplicatedABReplayJSONAndCheck
// for the same arguments, the check run in each replica's worktree, the HTML page
// written), and a replica flag the CLI refuses is a tool error with its message.
func TestMCPABReplicas(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	check := "test -f sim/task-1/build-implementer.txt"
	// The check is the user's, configured when the server starts; the page goes
	// into the run's directory.
	cs := mcpSessionWith(t, s, p.Project, now(p), &cli.MCPOptions{AllowWrite: true, Roots: []string{s.Root}, Checks: []string{check}})
	before := captureUserState(t, p)
	args := replicasArgs(t, p)
	html := filepath.Join(p.Scratch, "replicas.html")
	res := callTool(t, cs, "ab", map[string]any{
		"path": p.Scratch, "mutate": []string{args[2]}, "templates": p.Templates, "agent": args[6],
		"replicas": 2, "check": check, "html": html,
	})
	require.False(t, res.IsError, "%v", texts(res))
	var doc replicasJSON
	remarshal(t, res.StructuredContent, &doc)
	require.Len(t, doc.Replicas, 4)
	assert.Equal(t, "undecided", doc.Decision.Verdict)
	for i, rep := range doc.Replicas {
		assert.Equal(t, []string{"baseline", "mutated"}[i%2], rep.Arm)
		require.NotNil(t, rep.CheckExit, "the check ran")
		assert.Equal(t, *rep.CheckExit == 0, rep.Passed)
	}
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(page), "<!DOCTYPE html>"), "the HTML report is written")
	assertUntouched(t, p, before)

	res = callTool(t, cs, "ab", map[string]any{"path": p.Scratch, "mutate": []string{args[2]}, "replicas": 2, "diff": true})
	require.True(t, res.IsError, "no agent given")
	assert.NotContains(t, strings.Join(texts(res), "\n"), "--diff", "diff is accepted with replicas")
	assert.Contains(t, strings.Join(texts(res), "\n"), "--agent")
	res = callTool(t, cs, "ab", map[string]any{"path": p.Scratch, "mutate": []string{args[2]}, "until_decided": true})
	require.True(t, res.IsError)
	assert.Contains(t, strings.Join(texts(res), "\n"), "--until-decided belongs to a replicated A/B replay")
}
