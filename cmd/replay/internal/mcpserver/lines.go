package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one JSON-RPC message read by Lines; a longer line is answered
// with an error (with its request's id when the line's start gives it) and
// skipped, before anything is decoded. It is a call's largest arguments and room
// for the rest of its message: no longer line can be a call the server takes.
const MaxLine = MaxCallArgs + 64<<10

// Lines is the stdio transport of `replay mcp`: newline-delimited JSON-RPC
// messages read from r and written to w. Unlike a stream decoder it reads line by
// line, so a line that is not JSON is answered with a -32700 parse error, one that
// is JSON but no JSON-RPC message with -32600, and the session goes on with the
// next line. Nothing is written to w but JSON-RPC messages.
func Lines(r io.Reader, w io.Writer) mcp.Transport { return linesTransport{r: r, w: w} }

type linesTransport struct {
	r io.Reader
	w io.Writer
}

// Connect starts reading lines.
func (t linesTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{w: t.w, lines: make(chan lineOrErr), closed: make(chan struct{})}
	go c.readLines(t.r)
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is one session over Lines.
type lineConn struct {
	w         io.Writer
	writeMu   sync.Mutex
	lines     chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once
}

// readLines sends each line of r (without its newline) to c.lines, then the
// read error (io.EOF at the end).
func (c *lineConn) readLines(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == errLineTooLong {
			if err == errLineTooLong && line == nil {
				line = []byte{}
			}
			select {
			case c.lines <- lineOrErr{line: line, err: errLineOnly(err)}:
			case <-c.closed:
				return
			}
		}
		if err != nil && err != errLineTooLong {
			select {
			case c.lines <- lineOrErr{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

var errLineTooLong = fmt.Errorf("the line is longer than %d bytes", MaxLine)

// errLineOnly keeps the error that concerns the line itself.
func errLineOnly(err error) error {
	if err == errLineTooLong {
		return err
	}
	return nil
}

// probeBytes is how much of a line past MaxLine is kept to find its request id.
const probeBytes = 4 << 10

// readLine reads one line without its line ending; a line past MaxLine is
// read to its end and dropped (errLineTooLong), and its first probeBytes are
// returned for the request id they may hold.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > MaxLine {
			tooLong = true
			line = append(line, chunk[:min(len(chunk), max(0, probeBytes-len(line)))]...)
			line = line[:min(len(line), probeBytes):min(len(line), probeBytes)]
			line = bytes.Clone(line) // let the large buffer go
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong && err == nil {
			return line, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// probeID returns the top-level "id" of a JSON-RPC message's first bytes when it
// comes before anything the prefix cuts, nil otherwise.
func probeID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			return v
		}
	}
	return nil
}

// Read returns the next JSON-RPC message, answering every line that is not one.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l := <-c.lines:
			if l.err != nil && l.line == nil && l.err != errLineTooLong {
				return nil, l.err
			}
			var msg jsonrpc.Message
			var answer []byte
			if l.err != nil {
				answer = errorResponse(probeID(l.line), codeTooLarge, fmt.Sprintf(
					"%s (MaxLine: a call's arguments may be %s at most, within a memory budget of %s per call); send paths and names, not contents", l.err, size(MaxCallArgs), size(CallBudget)))
			} else {
				msg, answer = DecodeLine(l.line)
			}
			if answer != nil {
				if err := c.writeLine(answer); err != nil {
					return nil, err
				}
				continue
			}
			if msg != nil {
				return msg, nil
			}
		}
	}
}

// DecodeLine decodes one line a client sent: the JSON-RPC message, or nil and the
// JSON-RPC error response to write back (-32700 for text that is not JSON, -32600
// for JSON that is not a JSON-RPC 2.0 request, response or notification, with the
// request's id when it has one). A blank line is neither.
func DecodeLine(line []byte) (jsonrpc.Message, []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !json.Valid(line) {
		return nil, errorResponse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
	}
	if line[0] != '{' {
		return nil, errorResponse(nil, jsonrpc.CodeInvalidRequest, "invalid request: send one JSON-RPC message object per line (batches are not supported)")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		return nil, errorResponse(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message (it needs \"jsonrpc\":\"2.0\", a string or integer id, and a method or a result)")
	}
	return msg, nil
}

// errorResponse is a JSON-RPC error response line: id null unless id is a valid
// request id (a string or a whole number).
func errorResponse(id json.RawMessage, code int64, message string) []byte {
	idv := json.RawMessage("null")
	var v any
	if len(id) > 0 && json.Unmarshal(id, &v) == nil {
		switch x := v.(type) {
		case string:
			idv = id
		case float64:
			if x == float64(int64(x)) {
				idv = id
			}
		}
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", idv, jsonrpc.Error{Code: code, Message: message}})
	return data
}

// Write writes msg as one line.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close ends the session; a Read waiting returns.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *lineConn) SessionID() string { return "" }
