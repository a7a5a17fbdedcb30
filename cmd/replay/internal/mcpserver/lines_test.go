package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeLineAnswersWhatIsNotAMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{`not json`, -32700, nil},
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, 3.0},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{`42`, -32600, nil},
	} {
		msg, answer := DecodeLine([]byte(c.line))
		assert.Nil(t, msg, c.line)
		require.NotNil(t, answer, c.line)
		var resp struct {
			JSONRPC string `json:"jsonrpc"`
			ID      any    `json:"id"`
			Error   struct {
				Code    float64 `json:"code"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(answer, &resp), c.line)
		assert.Equal(t, "2.0", resp.JSONRPC)
		assert.Equal(t, c.code, resp.Error.Code, c.line)
		assert.Equal(t, c.id, resp.ID, c.line)
		assert.NotEmpty(t, resp.Error.Message)
	}
	msg, answer := DecodeLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	assert.NotNil(t, msg)
	assert.Nil(t, answer)
	msg, answer = DecodeLine([]byte("  \r"))
	assert.Nil(t, msg)
	assert.Nil(t, answer, "a blank line is skipped")
}

// FuzzDecodeLine feeds the request decoding any line: it never panics, and it
// returns a message or exactly one error response that is a JSON-RPC 2.0 error
// with code -32700 or -32600.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{"path":"/x","overlay":["12=/etc/passwd"]}}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`,
		`not json`, `[]`, `{}`, `{"jsonrpc":"2.0","id":null,"method":"x"}`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, answer := DecodeLine(line)
		if msg != nil && answer != nil {
			t.Fatalf("both a message and an answer for %q", line)
		}
		if answer == nil {
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(answer, &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Error.Code != -32700 && resp.Error.Code != -32600) {
			t.Fatalf("answer %s to %q is not a JSON-RPC parse or invalid-request error", answer, line)
		}
	})
}
