package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorDoc reads a tool error's structured content.
func errorDoc(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	require.True(t, res.IsError, "%v", mcpTexts(res))
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc), string(data))
	require.Contains(t, doc, "exit_code", "every error result carries exit_code: %s", data)
	require.Contains(t, doc, "exit_kind", "every error result carries exit_kind: %s", data)
	return doc
}

// TestMCPWriteGateIsNotAnExecGate: with --allow-write alone, the ab tool refuses
// an agent or check command the caller made up, and an html page outside the
// run's directory (exit 3, nothing run or written); a configured agent and check
// and a built-in agent go through; --allow-exec lets the caller's command run.
func TestMCPWriteGateIsNotAnExecGate(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	marker := filepath.Join(p.Root, "pwned")
	evil := "touch " + marker
	repl := filepath.Join(p.Project, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("# stricter\n- Every public function must have a test.\n"), 0o644))
	victim := filepath.Join(p.Root, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
	base := map[string]any{"path": p.Scratch, "mutate": []string{"build-reviewer-prompt.md=" + repl}}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	cs, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--check", "true", "--now", now(p))
	for name, args := range map[string]map[string]any{
		"caller's agent":   with("agent", "sh -c '"+evil+"'"),
		"caller's check":   with("agent", "builtin:sim", "replicas", 1, "check", evil),
		"html outside run": with("agent", "builtin:sim", "replicas", 1, "html", victim),
		"fork's agent":     {"path": p.Scratch, "at": 17, "agent": evil},
		"resume's agent":   {"path": p.Scratch, "confirm": true, "agent": evil},
	} {
		tool := "ab"
		if strings.HasPrefix(name, "fork") {
			tool = "fork"
		} else if strings.HasPrefix(name, "resume") {
			tool = "resume"
		}
		doc := errorDoc(t, mcpCall(t, cs, tool, args))
		assert.Equal(t, float64(3), doc["exit_code"], name)
		assert.Equal(t, "refused", doc["exit_kind"], name)
	}
	assert.NoFileExists(t, marker, "no command of the caller ran")
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(data))

	res := mcpCall(t, cs, "ab", with("agent", "builtin:sim", "replicas", 1, "check", "true", "html", filepath.Join(p.Scratch, "ab.html")))
	require.False(t, res.IsError, "a built-in agent, a configured check, a page in the run: %v", mcpTexts(res))
	assert.FileExists(t, filepath.Join(p.Scratch, "ab.html"))

	exec, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--allow-exec", "--now", now(p))
	res = mcpCall(t, exec, "ab", with("agent", "builtin:sim", "replicas", 1, "check", evil))
	require.False(t, res.IsError, "--allow-exec lets the caller's check run: %v", mcpTexts(res))
	assert.FileExists(t, marker)

	r := s.Run(t, p.Project, "mcp", "--allow-exec")
	assert.Equal(t, 2, r.Code, "--allow-exec alone: %s", r.Stderr)
	assert.Contains(t, r.Stderr, "--allow-write")
}

// TestMCPReadToolsReadOnlyTheProjectAndItsRuns: plan, diff, state and verify
// refuse a path outside the project and its runs (overlay files included, a
// symlink inside the project aimed outside too), and never return a line of it.
func TestMCPReadToolsReadOnlyTheProjectAndItsRuns(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	secret := filepath.Join(p.Root, "token.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOKEN-1234\n"), 0o600))
	link := filepath.Join(p.Project, "innocent.txt")
	require.NoError(t, os.Symlink(secret, link))
	cs, _ := mcpServer(t, s, p.Project, "mcp", "--now", now(p))
	for name, call := range map[string]struct {
		tool string
		args map[string]any
	}{
		"plan overlay":          {"plan", map[string]any{"path": p.Scratch, "overlay": []string{"15=" + secret}}},
		"plan overlay via link": {"plan", map[string]any{"path": p.Scratch, "overlay": []string{"15=" + link}}},
		"diff overlay":          {"diff", map[string]any{"path": p.Scratch, "overlay": []string{"15=" + secret}}},
		"plan path":             {"plan", map[string]any{"path": secret}},
		"state path":            {"state", map[string]any{"path": secret, "at": 3}},
		"verify path":           {"verify", map[string]any{"path": filepath.Dir(secret)}},
		"plan profile":          {"plan", map[string]any{"path": p.Scratch, "profile": secret}},
	} {
		res := mcpCall(t, cs, call.tool, call.args)
		doc := errorDoc(t, res)
		assert.Equal(t, float64(3), doc["exit_code"], name)
		assert.NotContains(t, strings.Join(mcpTexts(res), "\n"), "TOKEN-1234", name)
		assert.Contains(t, doc["error"], "outside the project and its runs", name)
	}
	res := mcpCall(t, cs, "plan", map[string]any{"path": p.Scratch})
	assert.False(t, res.IsError, "the project's own run is read: %v", mcpTexts(res))
}

// TestMCPSessionSurvivesBadInput speaks to the binary by hand: a line that is
// not JSON is answered with -32700 and later requests are answered; a call with
// a null or mistyped field is a tool error naming the field, with exit_code and
// exit_kind, and no Go internals; resume's schema requires confirm.
func TestMCPSessionSurvivesBadInput(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"state","arguments":{"path":` + jsonString(p.Scratch) + `,"at":null}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"state","arguments":{"path":` + jsonString(p.Scratch) + `,"at":"twelve"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"plan","arguments":"not an object"}}`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"state","arguments":{"path":` + jsonString(p.Scratch) + `,"at":12}}}`,
	}
	r := s.RunInput(t, p.Project, strings.Join(requests, "\n")+"\n", "mcp", "--allow-write", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "reflect", "no Go internals")
	assert.NotContains(t, r.Stdout, "map[string]interface", "no Go internals")
	answers := map[float64]map[string]any{}
	var orphans []map[string]any
	for _, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &msg), line)
		if id, ok := msg["id"].(float64); ok {
			answers[id] = msg
		} else {
			orphans = append(orphans, msg)
		}
	}
	require.Len(t, orphans, 2, "the bad lines are answered: %s", r.Stdout)
	assert.Equal(t, float64(-32700), orphans[0]["error"].(map[string]any)["code"])
	assert.Equal(t, float64(-32600), orphans[1]["error"].(map[string]any)["code"])
	require.Len(t, answers, 6, "every request after the bad lines is answered: %s", r.Stdout)
	for id, field := range map[float64]string{2: "field at is required", 3: "field at", 4: "JSON object"} {
		res := answers[id]["result"].(map[string]any)
		assert.Equal(t, true, res["isError"], id)
		sc := res["structuredContent"].(map[string]any)
		assert.Equal(t, float64(2), sc["exit_code"], id)
		assert.Equal(t, "usage", sc["exit_kind"], id)
		assert.Contains(t, sc["error"], field, id)
	}
	tools := answers[5]["result"].(map[string]any)["tools"].([]any)
	for _, tl := range tools {
		tool := tl.(map[string]any)
		if tool["name"] == "resume" {
			required, _ := tool["inputSchema"].(map[string]any)["required"].([]any)
			assert.Contains(t, required, "confirm", "resume's schema requires confirm")
		}
	}
	assert.Nil(t, answers[6]["result"].(map[string]any)["isError"], "answered after the bad lines")

	cs, _ := mcpServer(t, s, p.Project, "mcp", "--allow-write", "--now", now(p))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "resume", Arguments: map[string]any{"path": p.Scratch, "confirm": false}})
	require.NoError(t, err)
	doc := errorDoc(t, res)
	assert.Equal(t, float64(3), doc["exit_code"], "a refusal carries its exit code")
}
