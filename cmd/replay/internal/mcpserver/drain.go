package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Drain wraps t so that the end of the client's input (stdin closed) is reported
// to the server only once every request read before it has been answered. Without
// it the server stops at the end of its input and drops the answers of the calls
// still running: a client that writes its requests and closes stdin, as a script
// does, would lose them.
func Drain(t mcp.Transport) mcp.Transport { return drainTransport{t} }

type drainTransport struct{ mcp.Transport }

// Connect connects the wrapped transport and counts the requests in flight.
func (d drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, changed: make(chan struct{}), closed: make(chan struct{})}, nil
}

// drainConn counts the requests read and the responses written.
type drainConn struct {
	mcp.Connection
	mu        sync.Mutex
	pending   int
	changed   chan struct{} // closed and replaced when pending goes down
	closed    chan struct{}
	closeOnce sync.Once
}

// Read reads the next message; at the end of the input it first waits until
// every request read has been answered (or the connection is closed).
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.waitIdle(ctx)
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.mu.Lock()
		c.pending++
		c.mu.Unlock()
	}
	return msg, nil
}

// Write writes a message; a response answers one request in flight, whether or
// not it could be written.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.pending > 0 {
			c.pending--
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	return err
}

// Close closes the connection and ends a wait in Read.
func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *drainConn) waitIdle(ctx context.Context) {
	for {
		c.mu.Lock()
		pending, changed := c.pending, c.changed
		c.mu.Unlock()
		if pending == 0 {
			return
		}
		select {
		case <-changed:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}
