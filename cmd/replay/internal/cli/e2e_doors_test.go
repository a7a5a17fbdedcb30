//go:build unix

package cli_test

import (
	"context"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWithin runs replay and fails the test when it has not ended in a few seconds:
// a planted special file never makes a command wait.
func runWithin(t *testing.T, s *Sandbox, args ...string) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- s.Run(t, "", args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("replay %v blocked on a planted special file", args)
		return Result{}
	}
}

const doorsValidLine = `{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"dispatched"}` + "\n"

// The manifest commands on planted files (issue 38, attack 4): a FIFO torn
// sidecar, a 4 GiB torn last line and a 4 GiB sparse manifest are refused at once
// with a one-line error naming the file, and the manifest is not changed.
func TestManifestCommandsOnPlantedFiles(t *testing.T) {
	t.Parallel()
	before := func(dir string) []string {
		return []string{"manifest", "before", "--dir", dir, "--seq", "21", "--file", "21-build-reviewer.md", "--role", "build-reviewer"}
	}
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, dir string) string // returns the manifest's content before
		args  func(dir string) []string
		want  string
	}{
		{"manifest before with a FIFO manifest.jsonl.torn", func(t *testing.T, dir string) string {
			content := doorsValidLine + `{"seq":20,"file":"20-b`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(content), 0o644))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "manifest.jsonl.torn"), 0o644))
			return content
		}, before, "manifest.jsonl.torn is a FIFO"},
		{"manifest before with a 4 GiB torn last line", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "manifest.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(doorsValidLine+`{"seq":20,"file":"`), 0o644))
			require.NoError(t, os.Truncate(path, 4<<30))
			return ""
		}, before, "larger than the limit of 16 MiB"},
		{"manifest repair of a 4 GiB sparse manifest", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "manifest.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(doorsValidLine+"garbage\n"), 0o644))
			require.NoError(t, os.Truncate(path, 4<<30))
			return ""
		}, func(dir string) []string { return []string{"manifest", "repair", "--dir", dir} }, "larger than the limit of 1 GiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := NewSandbox(t)
			dir := filepath.Join(s.Root, "crucible-dispatch-1")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			want := c.plant(t, dir)
			st0, err := os.Stat(filepath.Join(dir, "manifest.jsonl"))
			require.NoError(t, err)
			r := runWithin(t, s, c.args(dir)...)
			assert.NotEqual(t, 0, r.Code)
			assert.Contains(t, r.Stderr, c.want)
			assert.Contains(t, r.Stderr, "nothing was written")
			st1, err := os.Stat(filepath.Join(dir, "manifest.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, st0.Size(), st1.Size(), "the manifest keeps its size")
			if want != "" {
				data, err := os.ReadFile(filepath.Join(dir, "manifest.jsonl"))
				require.NoError(t, err)
				assert.Equal(t, want, string(data))
			}
			backups, _ := filepath.Glob(filepath.Join(dir, "manifest.jsonl.bak-*"))
			assert.Empty(t, backups)
		})
	}
}

// The MCP policy asks the CLI's own resolver what a value means (issue 38, attack
// 3): diff's other ".." is the project's parent directory, a path, and is refused
// like its absolute form; a profile that names an existing file (a bare name
// included) is confined like any path; a session id stays a session id.
func TestMCPConfinesWhatTheCommandWouldRead(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSessionWith(t, s, p.Project, now(p), &cli.MCPOptions{})
	secret := filepath.Join(p.Root, "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"private": true}`), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(p.Project, "prof")))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"diff", map[string]any{"path": p.Scratch, "other": ".."}},
		{"diff", map[string]any{"path": p.Scratch, "other": p.Root}},
		{"plan", map[string]any{"path": p.Scratch, "profile": "prof"}},
		{"plan", map[string]any{"path": p.Scratch, "profile": ".."}},
	} {
		res := callTool(t, cs, c.tool, c.args)
		require.True(t, res.IsError, "%v: %v", c.args, texts(res))
		var doc struct {
			Error    string `json:"error"`
			ExitKind string `json:"exit_kind"`
		}
		remarshal(t, res.StructuredContent, &doc)
		assert.Equal(t, "refused", doc.ExitKind, "%v: %s", c.args, doc.Error)
		assert.Contains(t, doc.Error, "outside the project", c.args)
	}
	// A session id is not a path: the command decides it (no such session here).
	res := callTool(t, cs, "diff", map[string]any{"path": p.Scratch, "other": "1775430161"})
	var doc struct {
		ExitKind string `json:"exit_kind"`
	}
	remarshal(t, res.StructuredContent, &doc)
	assert.NotEqual(t, "refused", doc.ExitKind)
}

// Through the CLI's MCP server (issue 38, attack 5): a write tool on a read-only
// server is a JSON-RPC error that says to restart with --allow-write, and a call
// over the per-call argument budget is a JSON-RPC error naming it.
func TestMCPRefusalsNameTheLimit(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSession(t, s, p.Project, now(p), false)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "resume", Arguments: map[string]any{"confirm": true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "restart it as 'replay mcp --allow-write'")
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan", Arguments: map[string]any{"path": strings.Repeat("a", 2<<20)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a call may send")
}
