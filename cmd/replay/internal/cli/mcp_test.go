package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// mcpSession connects a client to an in-process replay MCP server over in-memory
// transports: the server's factory is the sandbox's, working in dir, with the
// global --now given.
func mcpSession(t testing.TB, s *Sandbox, dir, nowFlag string, allowWrite bool) *mcp.ClientSession {
	t.Helper()
	// The sandbox root holds the fixtures' templates and mutation files: the tests
	// add it as the user would with --root.
	return mcpSessionWith(t, s, dir, nowFlag, &cli.MCPOptions{AllowWrite: allowWrite, Roots: []string{s.Root}})
}

// mcpSessionWith is mcpSession with the flags of replay mcp in opts.
func mcpSessionWith(t testing.TB, s *Sandbox, dir, nowFlag string, opts *cli.MCPOptions) *mcp.ClientSession {
	t.Helper()
	ios, _, _, _ := testtools.Streams()
	environ := s.Environ()
	env := envMap(environ)
	ios.SetEnv(func(k string) string { return env[k] })
	// The server's dependencies, as NewCmdMCP takes them from the Factory.
	opts.IO = ios
	opts.Getenv = func(k string) string { return env[k] }
	opts.Getwd = func() (string, error) { return dir, nil }
	opts.Environ = func() []string { return append([]string(nil), environ...) }
	opts.Global.Now = nowFlag
	server, err := cli.NewMCPServer(opts)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	require.NoError(t, err)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return cs
}

// toolNames lists the server's tools, sorted.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
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

// callTool calls a tool and fails the test on a protocol error (a tool error is
// a result).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "tool %s", name)
	return res
}

// texts is the text of each content item of a result.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// assertSameDocument checks a tool's result holds exactly the document the CLI
// printed: the same bytes as its second text item, the same JSON as its
// structured content.
func assertSameDocument(t *testing.T, res *mcp.CallToolResult, cliOut string) {
	t.Helper()
	require.False(t, res.IsError, "tool error: %v", texts(res))
	got := texts(res)
	require.Len(t, got, 2, "a summary and the document")
	assert.Equal(t, cliOut, got[1], "the document's bytes are the CLI's")
	structured, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, cliOut, string(structured))
	assert.True(t, strings.HasPrefix(got[0], "replay "), "summary %q", got[0])
}

var readTools = []string{"checkpoint_list", "checkpoint_show", "diff", "plan", "state", "status", "verify"}

func TestMCPListsReadToolsUnlessWriteAllowed(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	ro := mcpSession(t, s, s.Root, "", false)
	assert.Equal(t, readTools, toolNames(t, ro))
	assert.Contains(t, ro.InitializeResult().Instructions, "NOT available")
	assert.Contains(t, ro.InitializeResult().Instructions, "replay mcp --allow-write")
	res, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "resume", Arguments: map[string]any{"confirm": true}})
	if err == nil {
		assert.True(t, res.IsError, "a write tool of a read-only server is not callable")
	}

	rw := mcpSession(t, s, s.Root, "", true)
	want := append(append([]string{}, readTools...), "ab", "fork", "resume")
	sort.Strings(want)
	assert.Equal(t, want, toolNames(t, rw))
	assert.NotContains(t, rw.InitializeResult().Instructions, "NOT available")

	tools, err := rw.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		require.NotNil(t, tool.Annotations, tool.Name)
		assert.Equal(t, contains(readTools, tool.Name), tool.Annotations.ReadOnlyHint, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
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

func TestMCPReadToolsPrintWhatTheCLIPrints(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)
	cs := mcpSession(t, s, p.Project, now(p), false)
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"status", map[string]any{"dir": p.Project}, []string{"status", p.Project}},
		{"plan", map[string]any{"path": p.Scratch, "explain": true}, []string{"plan", p.Scratch, "--explain"}},
		{"plan", map[string]any{}, []string{"plan"}},
		{"state", map[string]any{"path": p.ManifestPath, "at": 7}, []string{"state", p.ManifestPath, "--at", "7"}},
		{"checkpoint_list", map[string]any{}, []string{"checkpoint", "list"}},
		{"checkpoint_show", map[string]any{"ref": "pre-wave-2"}, []string{"checkpoint", "show", "pre-wave-2"}},
		{"verify", map[string]any{"path": p.Scratch}, []string{"verify", p.Scratch}},
	}
	for _, c := range cases {
		want := s.Run(t, p.Project, append(c.cli, "--json", "--now", now(p))...)
		require.Equal(t, 0, want.Code, "%v: %s", c.cli, want.Stderr)
		assertSameDocument(t, callTool(t, cs, c.tool, c.args), want.Stdout)
	}
	assert.Equal(t, before, digest(t, p.Root), "read-only tools change not a byte")
}

func TestMCPCallsRunConcurrently(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSession(t, s, p.Project, now(p), false)
	want := s.Run(t, p.Project, "plan", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, want.Code, want.Stderr)
	state := s.Run(t, p.Project, "state", p.Scratch, "--at", "12", "--json", "--now", now(p))
	require.Equal(t, 0, state.Code, state.Stderr)
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, args := "plan", map[string]any{"path": p.Scratch}
			if i%2 == 1 {
				name, args = "state", map[string]any{"path": p.Scratch, "at": 12}
			}
			results[i], errs[i] = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		}()
	}
	wg.Wait()
	for i, res := range results {
		require.NoError(t, errs[i])
		if i%2 == 1 {
			assertSameDocument(t, res, state.Stdout)
		} else {
			assertSameDocument(t, res, want.Stdout)
		}
	}
}

func TestMCPErrorsAreToolErrors(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSession(t, s, p.Project, now(p), false)
	missing := filepath.Join(p.Root, "no-such-run")

	want := s.Run(t, p.Project, "plan", missing, "--json", "--now", now(p))
	require.NotEqual(t, 0, want.Code)
	res := callTool(t, cs, "plan", map[string]any{"path": missing})
	require.True(t, res.IsError)
	assert.Equal(t, []string{firstLine(want.Stderr)}, texts(res), "the CLI's one-line message")
	var doc struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
		ExitKind string `json:"exit_kind"`
	}
	remarshal(t, res.StructuredContent, &doc)
	assert.Equal(t, want.Code, doc.ExitCode)
	assert.Equal(t, "no-resume", doc.ExitKind)
	assert.Equal(t, strings.TrimPrefix(firstLine(want.Stderr), "replay: "), doc.Error)

	// A path that looks like a flag stays a path: no --help, no --yes.
	res = callTool(t, cs, "plan", map[string]any{"path": "--help"})
	require.True(t, res.IsError, "%v", texts(res))
	assert.Contains(t, texts(res)[0], "--help")

	// A missing required argument and a wrong type are tool errors too.
	res = callTool(t, cs, "state", map[string]any{"path": p.Scratch})
	assert.True(t, res.IsError, "state without at")
	res = callTool(t, cs, "state", map[string]any{"path": p.Scratch, "at": "seven"})
	assert.True(t, res.IsError, "at is a number")
	res = callTool(t, cs, "checkpoint_show", map[string]any{"ref": ""})
	assert.True(t, res.IsError, "an empty ref")
	res = callTool(t, cs, "diff", map[string]any{"other": "1775430161"})
	assert.True(t, res.IsError, "other without path")

	// The server still answers.
	good := s.Run(t, p.Project, "status", "--json", "--now", now(p))
	assertSameDocument(t, callTool(t, cs, "status", map[string]any{}), good.Stdout)

	// A failing command that printed its document returns it with the error.
	strict := s.Run(t, p.Project, "verify", p.Scratch, "--strict", "--json", "--now", now(p))
	res = callTool(t, cs, "verify", map[string]any{"path": p.Scratch, "strict": true})
	assert.Equal(t, strict.Code != 0, res.IsError)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func remarshal(t *testing.T, v any, into any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, into), string(data))
}

func TestMCPResumeNeedsConfirm(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSession(t, s, p.Project, now(p), true)
	before := digest(t, p.Root)

	res := callTool(t, cs, "resume", map[string]any{"path": p.Scratch})
	require.True(t, res.IsError)
	assert.Contains(t, texts(res)[0], "confirm: true")
	res = callTool(t, cs, "resume", map[string]any{"path": p.Scratch, "confirm": false})
	require.True(t, res.IsError)
	assert.Equal(t, before, digest(t, p.Root), "refused: nothing changed")

	res = callTool(t, cs, "resume", map[string]any{"path": p.Scratch, "confirm": true})
	require.False(t, res.IsError, "%v", texts(res))
	repo, err := git.PlainOpen(p.Project)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	assert.Equal(t, p.Checkpoints[6].ProjectHead, head.Hash(), "restored to the resume point's checkpoint")
	assert.Contains(t, strings.Join(texts(res), "\n"), "checkpoint restore", "the undo is printed")
	var doc struct {
		Session string `json:"session"`
	}
	remarshal(t, res.StructuredContent, &doc)
	assert.Equal(t, strconv.FormatInt(p.Now.Unix(), 10), doc.Session, "the server's --now is the call's clock")
}

func TestMCPResumeKeepsTheBranchGuard(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.OtherBranch)
	cs := mcpSession(t, s, p.Project, now(p), true)
	before := digest(t, p.Root)
	res := callTool(t, cs, "resume", map[string]any{"path": p.Scratch, "confirm": true})
	require.True(t, res.IsError)
	assert.Contains(t, texts(res)[0], "Pipeline was running on branch feat/login but you are on main")
	var doc struct {
		ExitKind string `json:"exit_kind"`
	}
	remarshal(t, res.StructuredContent, &doc)
	assert.Equal(t, "refused", doc.ExitKind)
	assert.Equal(t, before, digest(t, p.Root))
}

func TestMCPABThenDiffAndFork(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	cs := mcpSession(t, s, p.Project, now(p), true)
	before := captureUserState(t, p)
	repl := stricter(t, p, "stricter.md")
	res := callTool(t, cs, "ab", map[string]any{
		"path": p.Scratch, "mutate": []string{"build-reviewer-prompt.md=" + repl},
		"templates": p.Templates, "agent": "builtin:sim", "diff": true,
	})
	require.False(t, res.IsError, "%v", texts(res))
	var ab struct {
		Session string `json:"session"`
	}
	remarshal(t, res.StructuredContent, &ab)
	require.NotEmpty(t, ab.Session)
	assertUntouched(t, p, before)

	want := s.Run(t, p.Project, "diff", p.Scratch, "--session", ab.Session, "--json", "--now", now(p))
	require.Equal(t, 0, want.Code, want.Stderr)
	assertSameDocument(t, callTool(t, cs, "diff", map[string]any{"path": p.Scratch, "session": ab.Session}), want.Stdout)

	res = callTool(t, cs, "ab", map[string]any{"path": p.Scratch})
	assert.True(t, res.IsError, "ab without mutate")

	answer := filepath.Join(p.Root, "verdict.txt")
	require.NoError(t, os.WriteFile(answer, []byte("VERDICT: FAIL\n"), 0o644))
	res = callTool(t, cs, "fork", map[string]any{"path": p.Scratch, "at": 16, "substitute": []string{"16=" + answer}, "reason": "what if"})
	require.False(t, res.IsError, "%v", texts(res))
	var fork struct {
		Session string `json:"session"`
	}
	remarshal(t, res.StructuredContent, &fork)
	require.NotEmpty(t, fork.Session, "%v", res.StructuredContent)
	lineage := s.Run(t, p.Project, "lineage", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, lineage.Code, lineage.Stderr)
	assert.Contains(t, lineage.Stdout, fork.Session)
}

// readmeToolRow is a row of the table of MCP tools in docs/mcp.md: the tool and its arguments.
var readmeToolRow = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `replay [^|]*` \\| ([^|]*) \\|$")

func TestReadmeListsEveryMCPToolArgument(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "mcp.md"))
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, m := range readmeToolRow.FindAllStringSubmatch(string(data), -1) {
		for _, a := range regexp.MustCompile("`([a-z_]+)(?:: true)?`").FindAllStringSubmatch(m[2], -1) {
			rows[m[1]] = append(rows[m[1]], a[1])
		}
	}
	cs := mcpSession(t, NewSandbox(t), "/", "", true)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, rows, len(tools.Tools), "one docs/mcp.md row per tool")
	for _, tool := range tools.Tools {
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		remarshal(t, tool.InputSchema, &schema)
		var names []string
		for name, prop := range schema.Properties {
			names = append(names, name)
			assert.NotEmpty(t, prop.Description, "%s.%s is documented", tool.Name, name)
		}
		assert.ElementsMatch(t, names, rows[tool.Name], "docs/mcp.md row of %s", tool.Name)
	}
}
