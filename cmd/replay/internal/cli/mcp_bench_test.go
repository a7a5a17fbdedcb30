package cli_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

func benchFixture(b *testing.B) (*Sandbox, *fixture.Pipeline) {
	b.Helper()
	p, err := fixture.Build(b.TempDir(), fixture.Options{})
	require.NoError(b, err)
	return &Sandbox{Root: p.Root, Home: p.Home, Tmp: p.Tmp}, p
}

// BenchmarkMCPPlanCall measures one plan tool call through an in-memory MCP
// session; BenchmarkCLIPlan the same command run in process without MCP, so the
// difference is what the protocol and the summary cost.
func BenchmarkMCPPlanCall(b *testing.B) {
	s, p := benchFixture(b)
	cs := mcpSession(b, s, p.Project, now(p), false)
	args := &mcp.CallToolParams{Name: "plan", Arguments: map[string]any{"path": p.Scratch}}
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), args)
		require.NoError(b, err)
		require.False(b, res.IsError)
	}
}

func BenchmarkCLIPlan(b *testing.B) {
	s, p := benchFixture(b)
	env := envMap(s.Environ())
	for b.Loop() {
		ios, _, _, _ := testtools.Streams()
		f := &cli.Factory{IOStreams: ios, Getenv: func(k string) string { return env[k] },
			Getwd: func() (string, error) { return p.Project, nil }}
		cmd := cli.NewCmdRoot(f)
		cmd.SetArgs([]string{"plan", p.Scratch, "--json", "--now", now(p)})
		require.Equal(b, 0, cli.Execute(f, cmd))
	}
}
