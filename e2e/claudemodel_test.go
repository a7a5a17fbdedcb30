package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// apiRequest is the part of an Anthropic Messages API request the scripted model
// reads.
type apiRequest struct {
	Model    string       `json:"model"`
	Stream   bool         `json:"stream"`
	Messages []apiMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// apiMessage is one message of a request; content is a string or a list of blocks.
type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// apiBlock is one content block of a message.
type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// blocks returns the message's content blocks (a string content is one text block).
func (m apiMessage) blocks() []apiBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []apiBlock{{Type: "text", Text: s}}
	}
	var bs []apiBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// text is every text the block carries: its own, or a tool result's content.
func (b apiBlock) text() string {
	if b.Type != "tool_result" {
		return b.Text
	}
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var parts []apiBlock
	_ = json.Unmarshal(b.Content, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// toolNames lists the tools the request offers.
func (r *apiRequest) toolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// allText joins every text of the conversation, tool results included.
func (r *apiRequest) allText() string {
	var sb strings.Builder
	for _, m := range r.Messages {
		for _, b := range m.blocks() {
			sb.WriteString(b.text())
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// lastUser returns the blocks of the last user message.
func (r *apiRequest) lastUser() []apiBlock {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].blocks()
		}
	}
	return nil
}

// modelReply is what the scripted model answers: some text, then at most one
// tool call (name and JSON input); without a tool call the turn ends.
type modelReply struct {
	Text      string
	Tool      string
	ToolInput any
}

// modelStep is one answer of the scripted model: check looks at the request (it
// reports a mismatch with t.Errorf) and returns the reply.
type modelStep struct {
	name  string
	check func(t *testing.T, req *apiRequest) modelReply
}

// scriptedModel is an Anthropic Messages API server on loopback that plays the
// model: each request of the client's main loop (one that offers tools) is
// answered by the next step of the script, as a stream of server-sent events.
// Side requests without tools (a title, a summary) get a short text.
type scriptedModel struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []modelStep
	next  int
	// requests are the main-loop requests, in order.
	requests []*apiRequest
}

func newScriptedModel(t *testing.T) *scriptedModel {
	m := &scriptedModel{t: t}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// script appends steps to the script.
func (m *scriptedModel) script(steps ...modelStep) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// done reports whether every step of the script was played.
func (m *scriptedModel) done() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next == len(m.steps)
}

func (m *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens": 100}`)
		return
	}
	req := &apiRequest{}
	if err := json.Unmarshal(body, req); err != nil {
		m.t.Errorf("scripted model: the client sent a request that is not JSON: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply, n := modelReply{Text: "OK."}, 0
	if len(req.Tools) > 0 {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		n = len(m.requests)
		var step *modelStep
		if m.next < len(m.steps) {
			step = &m.steps[m.next]
			m.next++
		}
		m.mu.Unlock()
		if step == nil {
			m.t.Errorf("scripted model: request %d of the main loop after the end of the script", n)
			reply = modelReply{Text: "The script is over."}
		} else {
			reply = step.check(m.t, req)
		}
	}
	writeStream(w, req, reply, n)
}

// writeStream answers with reply as the Messages API streams it.
func writeStream(w http.ResponseWriter, req *apiRequest, reply modelReply, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(name string, v map[string]any) {
		v["type"] = name
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	}
	model := req.Model
	if model == "" {
		model = "scripted"
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_scripted_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1},
	}})
	index := 0
	if reply.Text != "" {
		event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": reply.Text}})
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	stop := "end_turn"
	if reply.Tool != "" {
		stop = "tool_use"
		input, _ := json.Marshal(reply.ToolInput)
		event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", n), "name": reply.Tool, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		event("content_block_stop", map[string]any{"index": index})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// result returns the one tool result of the last user message: the answer to
// the scripted model's last tool call.
func (r *apiRequest) result() (apiBlock, bool) {
	for _, b := range r.lastUser() {
		if b.Type == "tool_result" {
			return b, true
		}
	}
	return apiBlock{}, false
}
