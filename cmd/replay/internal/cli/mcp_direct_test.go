package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/cmd/replay/internal/mcpserver"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestMCPToolsCallTheCommandsInProcess serves the tools mcpCommands covers with a
// Runner that fails the test: status, plan, state, diff, checkpoint_list, checkpoint_show, verify and resume never build
// a command line, and each returns what the command prints with --json, with the
// exit code and kind of the one table. (fork writes a child run: the fork tool's
// own tests compare it with the command.)
func TestMCPToolsCallTheCommandsInProcess(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	env := map[string]string{
		"HOME": p.Home, "TMPDIR": p.Tmp, "PATH": os.Getenv("PATH"), "REPLAY_PROMPT_DISABLED": "1",
		"GIT_CONFIG_NOSYSTEM": "1", SystemTmpEnv: filepath.Join(p.Root, "systmp"),
	}
	ios, _, _, _ := testtools.Streams()
	f := &Factory{
		IOStreams: ios,
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return p.Project, nil },
	}
	now := p.Now.UTC().Format(time.RFC3339)
	srv := &MCPOptions{cmdBase: baseOf(f), Environ: f.Environ}
	srv.Global.Now = now
	server := mcpserver.New(mcpserver.Options{AllowWrite: true, Commands: srv.mcpCommands(),
		Run: func(_ context.Context, args []string) mcpserver.Outcome {
			t.Errorf("a tool ran a command line: %q", args)
			return mcpserver.Outcome{Code: exitcode.Failure, Kind: exitcode.Name(exitcode.Failure)}
		}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close() })

	// cliJSON runs the command line through the root command, as the binary does.
	cliJSON := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		c := &Factory{IOStreams: &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv: f.Getenv, Getwd: f.Getwd}
		c.IOStreams.SetEnv(f.Getenv)
		cmd := NewCmdRoot(c)
		cmd.SetArgs(append([]string{"--json", "--now", now}, args...))
		code, _ := execute(c, cmd)
		return out.String(), code
	}
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"status", map[string]any{}, []string{"status"}},
		{"plan", map[string]any{"path": p.Scratch, "explain": true}, []string{"plan", p.Scratch, "--explain"}},
		{"state", map[string]any{"path": p.Scratch, "at": 7}, []string{"state", p.Scratch, "--at", "7"}},
		{"verify", map[string]any{"path": p.Scratch, "strict": true}, []string{"verify", p.Scratch, "--strict"}},
		{"checkpoint_list", map[string]any{}, []string{"checkpoint", "list"}},
		{"checkpoint_show", map[string]any{"ref": "pre-wave-2"}, []string{"checkpoint", "show", "pre-wave-2"}},
		{"diff", map[string]any{"path": p.Scratch}, []string{"diff", p.Scratch}},
		{"diff", map[string]any{"path": p.Scratch, "session": "1", "overlay": []string{"3=x"}}, []string{"diff", p.Scratch, "--session", "1", "--overlay", "3=x"}},
		{"plan", map[string]any{"path": filepath.Join(p.Root, "no-such-run")}, []string{"plan", filepath.Join(p.Root, "no-such-run")}},
		{"resume", map[string]any{"path": p.Scratch, "confirm": true, "jobs": 0, "agent_timeout": "soon"}, nil},
		{"resume", map[string]any{"path": p.Scratch, "confirm": true}, []string{}},
	}
	for _, c := range cases {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err, c.tool)
		var doc struct {
			ExitCode int    `json:"exit_code"`
			ExitKind string `json:"exit_kind"`
			Output   any    `json:"output"`
		}
		if c.cli == nil {
			require.True(t, res.IsError, "%s %v: a bad duration is refused", c.tool, c.args)
			require.NoError(t, json.Unmarshal(mustJSON(t, res.StructuredContent), &doc))
			assert.Equal(t, exitcode.Usage, doc.ExitCode)
			assert.Equal(t, "usage", doc.ExitKind)
			continue
		}
		if len(c.cli) == 0 {
			// The resume restores: compared with the command's document by the
			// tests of the resume tool; here, it ran with the server's clock.
			require.False(t, res.IsError, "%v", res.Content)
			require.Len(t, res.Content, 2)
			assert.Contains(t, res.Content[1].(*mcp.TextContent).Text, `"session": "`+strconv.FormatInt(p.Now.Unix(), 10)+`"`)
			continue
		}
		want, code := cliJSON(c.cli...)
		assert.Equal(t, code != exitcode.OK, res.IsError, "%s %v", c.tool, c.args)
		if code != exitcode.OK {
			require.NoError(t, json.Unmarshal(mustJSON(t, res.StructuredContent), &doc))
			assert.Equal(t, code, doc.ExitCode, c.tool)
			assert.Equal(t, exitcode.Name(code), doc.ExitKind, c.tool)
			continue
		}
		require.Len(t, res.Content, 2, c.tool)
		assert.Equal(t, want, res.Content[1].(*mcp.TextContent).Text, "%s: the document is the command's", c.tool)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}
