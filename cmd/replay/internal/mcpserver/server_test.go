package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a Runner that records the command lines it is given and answers
// with the outcome its answer function returns.
type recorder struct {
	mu     sync.Mutex
	lines  [][]string
	answer func(args []string) Outcome
}

func (r *recorder) run(_ context.Context, args []string) Outcome {
	r.mu.Lock()
	r.lines = append(r.lines, args)
	r.mu.Unlock()
	return r.answer(args)
}

func (r *recorder) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines[len(r.lines)-1]
}

func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(opts).Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func okDoc(args []string) Outcome {
	return Outcome{Stdout: []byte(`{"next_seq": 21, "skip": [1, 2], "skill": "build"}` + "\n"), Kind: "ok"}
}

func TestToolsMapInputsToCommandLines(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: okDoc}
	cs := connect(t, Options{AllowWrite: true, Run: rec.run})
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"status", map[string]any{}, []string{"status", "--"}},
		{"status", map[string]any{"dir": "-x", "scratch": "--yes"}, []string{"status", "--scratch=--yes", "--", "-x"}},
		{"plan", map[string]any{"path": "p", "explain": true, "from_seq": 7, "mutate": []string{"a=b", "c=d"}},
			[]string{"plan", "--explain", "--from-seq=7", "--mutate=a=b", "--mutate=c=d", "--", "p"}},
		{"state", map[string]any{"at": 0, "repo": "r"}, []string{"state", "--repo=r", "--at=0", "--"}},
		{"diff", map[string]any{"path": "a", "other": "b", "overlay": []string{"3=f"}}, []string{"diff", "--overlay=3=f", "--", "a", "b"}},
		{"checkpoint_list", map[string]any{"shadow": "s"}, []string{"checkpoint", "list", "--shadow=s", "--"}},
		{"checkpoint_show", map[string]any{"ref": "pre-wave-1"}, []string{"checkpoint", "show", "--", "pre-wave-1"}},
		{"verify", map[string]any{"strict": true, "agent": "builtin:sim"}, []string{"verify", "--strict", "--agent=builtin:sim", "--"}},
		{"resume", map[string]any{"confirm": true, "path": "--help", "agent": "recorded", "jobs": 2},
			[]string{"--agent=recorded", "--jobs=2", "--yes", "--", "--help"}},
		{"ab", map[string]any{"mutate": []string{"x.md=y.md"}, "templates": "t", "diff": true},
			[]string{"--templates=t", "--mutate=x.md=y.md", "--diff", "--"}},
		{"ab", map[string]any{"mutate": []string{"x.md=y.md"}, "allow_external": true},
			[]string{"--allow-external", "--mutate=x.md=y.md", "--"}},
		{"ab", map[string]any{"mutate": []string{"x.md=y.md"}, "replicas": 3, "max_replicas": 6, "until_decided": true,
			"check": "go test ./...", "metric": "findings", "html": "r.html"},
			[]string{"--mutate=x.md=y.md", "--replicas=3", "--max-replicas=6", "--until-decided", "--check=go test ./...", "--metric=findings", "--html=r.html", "--"}},
		{"fork", map[string]any{"at": 3, "agent": "recorded", "allow_external": true},
			[]string{"fork", "--at=3", "--agent=recorded", "--allow-external", "--"}},
		{"fork", map[string]any{"at": 16, "substitute": []string{"16=v.txt"}, "reason": "what if"},
			[]string{"fork", "--at=16", "--substitute=16=v.txt", "--reason=what if", "--"}},
	}
	for _, c := range cases {
		res := call(t, cs, c.tool, c.args)
		require.False(t, res.IsError, "%s: %v", c.tool, res.Content)
		assert.Equal(t, c.want, rec.last(), c.tool)
	}
}

func TestResultsCarryTheDocumentOrTheError(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: func(args []string) Outcome {
		switch args[0] {
		case "plan":
			return okDoc(args)
		case "verify":
			return Outcome{Stdout: []byte(`{"counts":{"absent":3}}`), Stderr: "replay: 3 absent\n", Code: 5, Kind: "unfaithful", Err: "3 absent"}
		case "status":
			panic("boom")
		}
		return Outcome{Stderr: "replay: no such run\n", Code: 4, Kind: "no-resume", Err: "no such run \\x1b[31m"}
	}}
	cs := connect(t, Options{Run: rec.run})

	res := call(t, cs, "plan", map[string]any{"path": "p"})
	require.False(t, res.IsError)
	require.Len(t, res.Content, 2)
	assert.Equal(t, "replay plan p --json: ok; next_seq=21, skip: 2 items, skill=build", res.Content[0].(*mcp.TextContent).Text)
	assert.Equal(t, okDoc(nil).Stdout, []byte(res.Content[1].(*mcp.TextContent).Text))
	assert.Equal(t, map[string]any{"next_seq": 21.0, "skip": []any{1.0, 2.0}, "skill": "build"}, res.StructuredContent)

	res = call(t, cs, "state", map[string]any{"at": 3})
	require.True(t, res.IsError)
	assert.Equal(t, "replay: no such run \\x1b[31m", res.Content[0].(*mcp.TextContent).Text)
	var e ErrorDocument
	data, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(data, &e))
	assert.Equal(t, ErrorDocument{Error: "no such run \\x1b[31m", ExitCode: 4, ExitKind: "no-resume", Stderr: "replay: no such run\n"}, e)

	res = call(t, cs, "verify", map[string]any{"strict": true})
	require.True(t, res.IsError)
	data, _ = json.Marshal(res.StructuredContent)
	assert.JSONEq(t, `{"error":"3 absent","exit_code":5,"exit_kind":"unfaithful","output":{"counts":{"absent":3}},"stderr":"replay: 3 absent\n"}`, string(data))

	res = call(t, cs, "status", map[string]any{})
	require.True(t, res.IsError, "a panic is a tool error")
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "internal error: boom")
	assert.False(t, call(t, cs, "plan", map[string]any{}).IsError, "the server goes on")
}

func TestWriteToolsNeedAllowWriteAndConfirm(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: okDoc}
	ro := connect(t, Options{Run: rec.run})
	tools, err := ro.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		assert.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
		assert.NotContains(t, []string{"resume", "ab", "fork"}, tool.Name)
	}
	_, err = ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "resume", Arguments: map[string]any{"confirm": true}})
	assert.Error(t, err, "no such tool on a read-only server")
	assert.Contains(t, ro.InitializeResult().Instructions, "NOT available")

	rw := connect(t, Options{AllowWrite: true, Run: rec.run})
	res := call(t, rw, "resume", map[string]any{"path": "p"})
	require.True(t, res.IsError)
	res = call(t, rw, "ab", map[string]any{"mutate": []string{}})
	require.True(t, res.IsError)
	res = call(t, rw, "diff", map[string]any{"other": "b"})
	require.True(t, res.IsError)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Empty(t, rec.lines, "a refused call runs no command")
}

// FuzzArgvKeepsValuesAndArguments checks that no value a client sends becomes a
// flag or another argument: parsed back, every flag has its value and the
// positional arguments are exactly those given.
func FuzzArgvKeepsValuesAndArguments(f *testing.F) {
	f.Add("path", "scratch", "a=b")
	f.Add("--yes", "--json", "--mutate=x")
	f.Add("-", "-y", "--")
	f.Add("", "a b\nc", "=")
	f.Fuzz(func(t *testing.T, path, scratch, mutate string) {
		a := &argv{}
		a.pos(path)
		a.str("scratch", scratch)
		a.strs("mutate", []string{mutate})
		a.flag("yes", false)
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		gotScratch := fs.String("scratch", "", "")
		gotMutate := fs.StringArray("mutate", nil, "")
		yes := fs.Bool("yes", false, "")
		require.NoError(t, fs.Parse(a.line()))
		assert.Equal(t, scratch, *gotScratch)
		assert.Equal(t, []string{mutate}, *gotMutate)
		assert.False(t, *yes)
		var want []string
		if path != "" {
			want = []string{path}
		}
		assert.Equal(t, strings.Join(want, "\x00"), strings.Join(fs.Args(), "\x00"))
	})
}

func TestDrainAnswersEveryRequestBeforeTheEnd(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rec := &recorder{answer: func(args []string) Outcome {
		<-release // every call is still running when the input ends
		return okDoc(args)
	}}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"status","arguments":{}}}
`
	out := &testtools.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- New(Options{Run: rec.run}).Run(context.Background(), Drain(&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: out}))
	}()
	for calls := 0; calls < 2; {
		select {
		case err := <-done:
			t.Fatalf("the server stopped before the calls ran: %v; wrote %s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		rec.mu.Lock()
		calls = len(rec.lines)
		rec.mu.Unlock()
	}
	select {
	case err := <-done:
		t.Fatalf("the server stopped with calls in flight: %v; wrote %s", err, out.String())
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	<-done
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			ID float64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &msg), line)
		ids[msg.ID] = true
	}
	assert.Equal(t, map[float64]bool{1: true, 2: true, 3: true, 4: true}, ids, out.String())
}
