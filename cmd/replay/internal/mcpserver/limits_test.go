package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rpcError is the JSON-RPC error a call was refused with.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "a JSON-RPC error, got %v", err)
	return we
}

// A call over MaxCallArgs is refused before the tool runs, with a JSON-RPC error
// naming the limit; a write tool on a read-only server says how to allow it.
func TestCallsAreBoundedAndWriteToolsNameTheFlag(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: okDoc}
	cs := connect(t, Options{Run: rec.run})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan", Arguments: map[string]any{"path": strings.Repeat("a", MaxCallArgs+1)}})
	we := rpcError(t, err)
	assert.Equal(t, int64(codeTooLarge), we.Code)
	assert.Contains(t, we.Message, "over the 1.0 MiB a call may send")
	rec.mu.Lock()
	assert.Empty(t, rec.lines, "no command ran")
	rec.mu.Unlock()

	for _, name := range writeToolNames {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		we := rpcError(t, err)
		assert.Equal(t, int64(codeNeedsWrite), we.Code, name)
		assert.Contains(t, we.Message, "replay mcp --allow-write", name)
	}
	res := call(t, cs, "plan", map[string]any{"path": "p"})
	assert.False(t, res.IsError, "a call within the limits runs")
}

// At most MaxConcurrentCalls run at once and MaxQueuedCalls wait; one more is
// refused at once with a JSON-RPC error naming the bounds, and calls are taken
// again once they have answered.
func TestConcurrentCallsAreBounded(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 4*(MaxConcurrentCalls+MaxQueuedCalls))
	rec := &recorder{answer: func(args []string) Outcome { started <- struct{}{}; <-release; return okDoc(args) }}
	cs := connect(t, Options{Run: rec.run})
	var done sync.WaitGroup
	for range MaxConcurrentCalls + MaxQueuedCalls {
		done.Add(1)
		go func() {
			defer done.Done()
			// A probe below may hold a waiting place for a moment (until its
			// cancellation reaches the server): a refused call is sent again.
			for {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan", Arguments: map[string]any{}})
				var we *jsonrpc.Error
				if errors.As(err, &we) && we.Code == codeBusy {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				assert.NoError(t, err)
				return
			}
		}()
	}
	for range MaxConcurrentCalls {
		<-started
	}
	// The queued calls are in the middleware when the server has taken them:
	// wait until one more is refused.
	var err error
	for range 2000 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}})
		cancel()
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			break // refused: the queue is full
		}
	}
	we := rpcError(t, err)
	assert.Equal(t, int64(codeBusy), we.Code)
	assert.Contains(t, we.Message, "MaxConcurrentCalls, MaxQueuedCalls")
	close(release)
	done.Wait()
	res := call(t, cs, "status", map[string]any{})
	assert.False(t, res.IsError)
}

// Over stdio, a line past MaxLine (a 30 MiB call) is answered with a JSON-RPC
// error carrying its request's id and naming the limit, without being decoded,
// and the session goes on.
func TestALineOverMaxLineIsAnsweredWithItsID(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rec := &recorder{answer: okDoc}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = New(Options{Run: rec.run}).Run(ctx, Lines(inR, outW)) }()
	out := bufio.NewReader(outR)
	send := func(s string) {
		go func() { _, _ = inW.Write([]byte(s + "\n")) }()
	}
	read := func() map[string]any {
		line, err := out.ReadBytes('\n')
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"plan","arguments":{"path":"` + strings.Repeat("a", 30<<20) + `"}}}`)
	deadline := time.AfterFunc(30*time.Second, func() { outR.Close() })
	defer deadline.Stop()
	m := read()
	assert.Equal(t, "big", m["id"])
	e := m["error"].(map[string]any)
	assert.Equal(t, float64(codeTooLarge), e["code"])
	assert.Contains(t, e["message"], "MaxLine")
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, float64(2), read()["id"], "the session goes on")
}
