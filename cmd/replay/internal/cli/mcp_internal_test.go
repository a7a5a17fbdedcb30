package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// TestToolCallCancelStopsTheAgents cancels a tool call while its A/B replay waits
// on an agent: the agent is stopped and the call ends as interrupted, as Ctrl-C
// ends the command.
func TestToolCallCancelStopsTheAgents(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	started := filepath.Join(p.Root, "agent-started")
	script := filepath.Join(p.Root, "slow-agent.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+started+"\nexec sleep 600\n"), 0o755))
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("# stricter\n- Every public function must have a test.\n"), 0o644))
	env := map[string]string{
		"HOME": p.Home, "TMPDIR": p.Tmp, "PATH": os.Getenv("PATH"), "REPLAY_PROMPT_DISABLED": "1",
		"GIT_CONFIG_NOSYSTEM": "1", SystemTmpEnv: filepath.Join(p.Root, "systmp"),
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	ios, _, _, _ := testtools.Streams()
	f := &Factory{
		IOStreams: ios,
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return p.Project, nil },
		Environ:   func() []string { return environ },
	}
	srv := &MCPOptions{cmdBase: baseOf(f), Environ: f.Environ}
	srv.Global.Now = p.Now.UTC().Format(time.RFC3339)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	out := srv.toolRunner()(ctx, []string{"--mutate=build-reviewer-prompt.md=" + repl, "--templates=" + p.Templates,
		"--agent=sh " + script, "--reuse=never", "--", p.Scratch})
	assert.FileExists(t, started, "the agent ran")
	assert.Equal(t, exitcode.Interrupted, out.Code, "stderr: %s", out.Stderr)
	assert.Equal(t, "interrupted", out.Kind)
}

func TestMCPFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args  []string
		write bool
	}{
		{[]string{}, false}, // not nil: cobra reads os.Args for nil
		{[]string{"--allow-write"}, true},
	} {
		ios, _, _, _ := testtools.Streams()
		var got *MCPOptions
		cmd := NewCmdMCP(&Factory{IOStreams: ios}, func(o *MCPOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		require.NoError(t, cmd.Execute())
		require.NotNil(t, got)
		assert.Equal(t, c.write, got.AllowWrite, "%v", c.args)
	}
}

// TestMCPRunServesStdio runs mcpRun on pipes for stdin and stdout: a client lists
// the tools, and closing stdin ends the run without error.
func TestMCPRunServesStdio(t *testing.T) {
	t.Parallel()
	ios, _, _, errOut := testtools.Streams()
	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	ios.In, ios.Out = clientOut, clientIn
	f := &Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return t.TempDir(), nil }}
	done := make(chan error, 1)
	go func() {
		done <- mcpRun(&MCPOptions{cmdBase: baseOf(f), AllowWrite: true})
		clientIn.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, tools.Tools, 10)
	require.NoError(t, cs.Close())
	require.NoError(t, <-done, "stderr: %s", errOut.String())
}
