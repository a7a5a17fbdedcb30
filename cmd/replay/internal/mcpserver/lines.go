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

// Lines is the stdio transport of `replay mcp`: the SDK's own (mcp.IOTransport,
// newline-delimited JSON-RPC on r and w) behind a guard that reads r line by line
// first. Unlike the SDK's stream decoder, which ends the session at the first
// byte that is not JSON, the guard answers a line that is not JSON with a -32700
// parse error, one that is JSON but no JSON-RPC message with -32600, and one past
// MaxLine with its request's id, and the session goes on with the next line; the
// lines that are messages go on to the SDK. Nothing is written to w but JSON-RPC
// messages, each in one write.
func Lines(r io.Reader, w io.Writer) mcp.Transport { return linesTransport{r: r, w: w} }

type linesTransport struct {
	r io.Reader
	w io.Writer
}

// Connect starts the guard and connects the SDK's transport to what it passes on.
func (t linesTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lineWriter{w: t.w}
	pr, pw := io.Pipe()
	go guardLines(t.r, pw, out)
	return (&mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: MaxLine + 1}).Connect(ctx)
}

// lineWriter writes each message whole, whoever writes it (the SDK's answers, the
// guard's); closing it leaves w open.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error { return nil }

// guardLines reads r line by line: each JSON-RPC message goes on to pw, every
// other line is answered on out; the end of r (or its read error) ends pw.
func guardLines(r io.Reader, pw *io.PipeWriter, out io.Writer) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		var answer []byte
		switch {
		case err == errLineTooLong:
			answer = errorResponse(probeID(line), codeTooLarge, fmt.Sprintf(
				"%s (MaxLine: a call's arguments may be %s at most, within a memory budget of %s per call); send paths and names, not contents", err, size(MaxCallArgs), size(CallBudget)))
		case len(line) > 0:
			var msg jsonrpc.Message
			if msg, answer = DecodeLine(line); msg != nil {
				if _, werr := pw.Write(append(bytes.TrimSpace(line), '\n')); werr != nil {
					return // the session is closed
				}
			}
		}
		if answer != nil {
			if _, werr := out.Write(append(answer, '\n')); werr != nil {
				pw.CloseWithError(werr)
				return
			}
		}
		if err != nil && err != errLineTooLong {
			pw.CloseWithError(err) // io.EOF: the SDK's reader sees the end
			return
		}
	}
}

var errLineTooLong = fmt.Errorf("the line is longer than %d bytes", MaxLine)

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
