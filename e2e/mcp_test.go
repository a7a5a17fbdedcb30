package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// mcpServer starts `replay ARGS...` (the mcp command and its flags) in dir as a
// subprocess and connects the SDK's client to it over its stdin and stdout. The
// returned buffer collects the server's stderr.
func mcpServer(t *testing.T, s *Sandbox, dir string, args ...string) (*mcp.ClientSession, *testtools.Buffer) {
	t.Helper()
	cmd := s.Command(dir, args...)
	var stderr testtools.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr.String())
	t.Cleanup(func() { cs.Close() })
	return cs, &stderr
}

func mcpToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "tool %s", name)
	return res
}

func mcpTexts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

var mcpReadTools = []string{"checkpoint_list", "checkpoint_show", "diff", "plan", "state", "status", "verify"}

func TestMCPServerListsToolsByWriteAccess(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	ro, _ := mcpServer(t, s, s.Root, "mcp")
	assert.Equal(t, mcpReadTools, mcpToolNames(t, ro))
	assert.Contains(t, ro.InitializeResult().Instructions, "--allow-write")
	assert.Equal(t, "replay", ro.InitializeResult().ServerInfo.Name)

	rw, _ := mcpServer(t, s, s.Root, "mcp", "--allow-write")
	want := append(append([]string{}, mcpReadTools...), "ab", "fork", "resume")
	sort.Strings(want)
	assert.Equal(t, want, mcpToolNames(t, rw))

	r := s.Run(t, "", "mcp", "--now", "yesterday")
	assert.Equal(t, 2, r.Code, "a bad global flag stops the server before it starts")
	assert.Empty(t, r.Stdout)

	// A line that is not JSON is answered with a parse error; the session goes on
	// to the end of its input (see TestMCPSessionSurvivesBadInput).
	r = s.RunInput(t, "", "not json\n", "mcp")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"code":-32700`)
}

func TestMCPServerToolsPrintWhatTheCLIPrints(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)
	cs, stderr := mcpServer(t, s, p.Project, "mcp", "--now", now(p))
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"status", map[string]any{}, []string{"status"}},
		{"plan", map[string]any{"path": p.Scratch, "explain": true}, []string{"plan", p.Scratch, "--explain"}},
		{"state", map[string]any{"path": p.ManifestPath, "at": 12}, []string{"state", p.ManifestPath, "--at", "12"}},
		{"checkpoint_list", map[string]any{"repo": p.Project}, []string{"checkpoint", "list", "--repo", p.Project}},
		{"checkpoint_show", map[string]any{"ref": "pre-wave-1"}, []string{"checkpoint", "show", "pre-wave-1"}},
		{"verify", map[string]any{}, []string{"verify"}},
	}
	for _, c := range cases {
		want := s.Run(t, p.Project, append(c.cli, "--json", "--now", now(p))...)
		require.Equal(t, 0, want.Code, "%v: %s", c.cli, want.Stderr)
		res := mcpCall(t, cs, c.tool, c.args)
		require.False(t, res.IsError, "%s: %v", c.tool, mcpTexts(res))
		got := mcpTexts(res)
		require.Len(t, got, 2)
		assert.Equal(t, want.Stdout, got[1], "%s: the bytes replay %v --json prints", c.tool, c.cli)
		structured, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		assert.JSONEq(t, want.Stdout, string(structured), c.tool)
	}

	// A bad path is a tool error with the CLI's line, and the server goes on.
	missing := filepath.Join(p.Project, "gone", "manifest.jsonl")
	want := s.Run(t, p.Project, "state", missing, "--at", "3", "--json")
	require.NotEqual(t, 0, want.Code)
	res := mcpCall(t, cs, "state", map[string]any{"path": missing, "at": 3})
	require.True(t, res.IsError)
	assert.Equal(t, []string{strings.SplitN(want.Stderr, "\n", 2)[0]}, mcpTexts(res))
	res = mcpCall(t, cs, "status", map[string]any{})
	assert.False(t, res.IsError, "the server still answers after a tool error")

	assert.Equal(t, before, digest(t, p.Root), "read-only tools change not a byte")
	assert.NotContains(t, stderr.String(), "panic")
}

func TestMCPServerResumeConfirmAndBranchGuard(t *testing.T) {
	t.Parallel()
	t.Run("without confirm refused, with confirm restores", func(t *testing.T) {
		t.Parallel()
		s, p := pipelineSandbox(t)
		cs, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--now", now(p))
		before := digest(t, p.Root)
		res := mcpCall(t, cs, "resume", map[string]any{"path": p.Scratch})
		require.True(t, res.IsError)
		assert.Contains(t, mcpTexts(res)[0], "confirm: true")
		assert.Equal(t, before, digest(t, p.Root), "nothing changed")

		res = mcpCall(t, cs, "resume", map[string]any{"path": p.Scratch, "confirm": true})
		require.False(t, res.IsError, "%v", mcpTexts(res))
		repo, err := git.PlainOpen(p.Project)
		require.NoError(t, err)
		head, err := repo.Head()
		require.NoError(t, err)
		assert.Equal(t, p.Checkpoints[6].ProjectHead, head.Hash())
	})
	t.Run("branch mismatch refused even with confirm", func(t *testing.T) {
		t.Parallel()
		s, p := pipelineSandbox(t, fixture.OtherBranch)
		cs, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--now", now(p))
		before := digest(t, p.Root)
		res := mcpCall(t, cs, "resume", map[string]any{"path": p.Scratch, "confirm": true})
		require.True(t, res.IsError)
		assert.Contains(t, mcpTexts(res)[0], "Pipeline was running on branch feat/login but you are on main")
		assert.Equal(t, before, digest(t, p.Root))
	})
}

// readmeMCPConfig is the JSON block of docs/mcp.md, the guide to `replay mcp`.
var readmeMCPConfig = regexp.MustCompile("(?s)```json\n(\\{\\s*\"mcpServers\".*?)```")

// readmeClaudeAdd is a `claude mcp add` line of docs/mcp.md.
var readmeClaudeAdd = regexp.MustCompile(`(?m)^claude mcp add (?:--scope \S+ )?replay -- (replay mcp.*)$`)

func TestReadmeMCPRegistrationStartsTheServer(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "docs", "mcp.md"))
	require.NoError(t, err)
	m := readmeMCPConfig.FindSubmatch(data)
	require.NotNil(t, m, "docs/mcp.md shows the JSON config of replay mcp")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(m[1], &cfg))
	entry, ok := cfg.MCPServers["replay"]
	require.True(t, ok)
	require.Equal(t, "replay", entry.Command)
	lines := [][]string{entry.Args}
	for _, l := range readmeClaudeAdd.FindAllStringSubmatch(string(data), -1) {
		lines = append(lines, strings.Fields(l[1])[1:])
	}
	require.GreaterOrEqual(t, len(lines), 3, "the JSON form and the claude mcp add lines, with and without --allow-write")
	s := NewSandbox(t)
	for _, args := range lines {
		cs, _ := mcpServer(t, s, s.Root, args...)
		names := mcpToolNames(t, cs)
		assert.Equal(t, contains(args, "--allow-write"), contains(names, "resume"), "%v", args)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestMCPServerWriteToolsThenDiff(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	// The fixture's templates and the mutation file lie beside the project: the
	// user adds that directory with --root.
	cs, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--root", p.Root, "--now", now(p))
	project := digest(t, p.Project)
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("# stricter\n- Every public function must have a test.\n"), 0o644))
	res := mcpCall(t, cs, "ab", map[string]any{
		"path": p.Scratch, "mutate": []string{"build-reviewer-prompt.md=" + repl},
		"templates": p.Templates, "agent": "builtin:sim", "diff": true,
	})
	require.False(t, res.IsError, "%v", mcpTexts(res))
	var ab struct {
		Session string `json:"session"`
	}
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &ab))
	require.NotEmpty(t, ab.Session)
	assert.Equal(t, project, digest(t, p.Project), "an A/B replay leaves the project alone")

	want := s.Run(t, p.Project, "diff", p.Scratch, "--session", ab.Session, "--json", "--now", now(p))
	require.Equal(t, 0, want.Code, want.Stderr)
	res = mcpCall(t, cs, "diff", map[string]any{"path": p.Scratch, "session": ab.Session})
	require.False(t, res.IsError, "%v", mcpTexts(res))
	assert.Equal(t, want.Stdout, mcpTexts(res)[1], "the bytes replay diff --json prints")

	res = mcpCall(t, cs, "fork", map[string]any{"path": p.Scratch, "at": 17, "reason": "from the MCP client"})
	require.False(t, res.IsError, "%v", mcpTexts(res))
	var fork struct {
		Session string `json:"session"`
		Dir     string `json:"dir"`
	}
	data, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &fork))
	assert.FileExists(t, filepath.Join(fork.Dir, "lineage.json"))
	lineage := s.Run(t, p.Project, "lineage", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, lineage.Code, lineage.Stderr)
	assert.Contains(t, lineage.Stdout, fork.Session)
}

// TestMCPServerStdoutIsOnlyTheProtocol speaks JSON-RPC to the binary by hand: every
// line it writes on stdout is a JSON-RPC message, warnings and errors of the
// commands included stay inside results, and it exits 0 when stdin closes.
func TestMCPServerStdoutIsOnlyTheProtocol(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{"path":` + jsonString(p.Scratch) + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"verify","arguments":{"path":"/no/such/run"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"resume","arguments":{"confirm":true}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"state","arguments":{"path":` + jsonString(p.Scratch) + `,"at":12}}}`,
	}
	r := s.RunInput(t, p.Project, strings.Join(requests, "\n")+"\n", "mcp", "--now", now(p))
	require.Equal(t, 0, r.Code, "stdin closed: a clean stop; stderr: %s", r.Stderr)
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &msg), "stdout line %q is not JSON", line)
		require.Equal(t, "2.0", msg["jsonrpc"], line)
		if id, ok := msg["id"].(float64); ok {
			answers[id] = msg
		}
	}
	require.Len(t, answers, 5, r.Stdout)
	result := func(id float64) map[string]any {
		res, ok := answers[id]["result"].(map[string]any)
		require.True(t, ok, "answer %v: %v", id, answers[id])
		return res
	}
	assert.Nil(t, result(2)["isError"])
	assert.Equal(t, true, result(3)["isError"], "a bad path is a tool error")
	assert.NotNil(t, answers[4]["error"], "resume is not a tool of a read-only server")
	assert.Nil(t, result(5)["isError"], "the server answered after the errors")
}

func jsonString(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}
