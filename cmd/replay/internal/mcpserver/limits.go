package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The memory a tool call may cost, and how many run at once. A call builds
// several copies of its arguments on the way to the command (the JSON-RPC
// message, the SDK's params, the schema check, the decoded fields, the command
// line, and the messages and output that quote them): measured through the
// stdio server (`replay mcp`, plan calls with a 1 or 1.9 MiB path), a call holds
// 50 to 60 times its arguments' size at its peak, so CallAmplification is 64.
// CallBudget is what one call may hold; MaxCallArgs follows from it.
// MaxConcurrentCalls run at once and MaxQueuedCalls more wait for a slot, so the
// calls of one server hold at most (MaxConcurrentCalls + MaxQueuedCalls) ×
// CallBudget, and a call past both is refused at once. The arguments of every
// tool are paths, names and short lists: a real call is a few hundred bytes.
const (
	CallBudget         = 64 << 20
	CallAmplification  = 64
	MaxCallArgs        = CallBudget / CallAmplification // 1 MiB
	MaxConcurrentCalls = 4
	MaxQueuedCalls     = 12
)

// JSON-RPC error codes of the server's own refusals of a call, in the range
// -32000 to -32099 of server errors, clear of those the SDK uses (-32001 to
// -32005: unknown, closing, rejected) and MCP's -32002 (resource not found).
const (
	codeTooLarge   = -32010
	codeBusy       = -32011
	codeNeedsWrite = -32012
)

// writeToolNames are the tools only a server started with --allow-write has.
var writeToolNames = []string{"resume", "ab", "fork"}

// limits is the middleware that bounds every tools/call before its tool decodes
// the arguments: a call whose arguments are over MaxCallArgs, a call while
// MaxConcurrentCalls run and MaxQueuedCalls wait, and a write tool on a read-only
// server are refused with a JSON-RPC error that names the limit (or the flag to
// restart with).
func limits(allowWrite bool) mcp.Middleware {
	slots := make(chan struct{}, MaxConcurrentCalls)
	queue := make(chan struct{}, MaxConcurrentCalls+MaxQueuedCalls)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if err := callAllowed(p.Name, p.Arguments, allowWrite); err != nil {
					return nil, err
				}
			}
			select {
			case queue <- struct{}{}:
				defer func() { <-queue }()
			default:
				return nil, &jsonrpc.Error{Code: codeBusy, Message: fmt.Sprintf(
					"server busy: %d tool calls are running and %d waiting, the most this server takes at once (MaxConcurrentCalls, MaxQueuedCalls); send this call again when one has answered",
					MaxConcurrentCalls, MaxQueuedCalls)}
			}
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	}
}

// callAllowed refuses a call of tool name with args that the server does not take.
func callAllowed(name string, args json.RawMessage, allowWrite bool) error {
	if !allowWrite && slices.Contains(writeToolNames, name) {
		return &jsonrpc.Error{Code: codeNeedsWrite, Message: fmt.Sprintf(
			"tool %q changes the project and this server was started read-only; restart it as 'replay mcp --allow-write' to allow resume, ab and fork", name)}
	}
	if len(args) > MaxCallArgs {
		return &jsonrpc.Error{Code: codeTooLarge, Message: fmt.Sprintf(
			"tool %q: the arguments are %s, over the %s a call may send (a call builds up to %d× its arguments, within a budget of %s per call); send paths and names, not contents",
			name, size(int64(len(args))), size(MaxCallArgs), CallAmplification, size(CallBudget))}
	}
	return nil
}

// size renders a byte count in KiB or MiB.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
