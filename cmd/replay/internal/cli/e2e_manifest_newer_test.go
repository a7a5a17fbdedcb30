package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These cases replay, through the binary, the behaviour that Crucible's newer
// scripts/dispatch.py adds (the version whose tests record model_profile and
// actual_model; docs/upstream.md): free-form model labels with a neutral profile,
// an omitted label recorded as null, the observed model of a completion, oversized
// labels nulled to keep a line atomic. The older version's cases are in
// e2e_manifest_dispatchpy_test.go.

// fields decodes one manifest line.
func fields(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m), line)
	return m
}

func beforeWith(tier ...string) scriptStep {
	args := []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "plan-writer"}
	if len(tier) > 0 {
		args = append(args, "--model-tier", tier[0])
	}
	return scriptStep{args: args, out: "dispatched seq 1 (1-plan-writer.md, 124 chars)\n"}
}

var newerDispatchPyCases = []dispatchPyCase{
	{name: "opus is recorded with profile high, the observed model with after", steps: []scriptStep{beforeWith("opus"),
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--actual-model", "observed-model"}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		manifest: []string{
			`{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","tool_calls":null}`,
			`{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"completed","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","actual_model":"observed-model","tool_calls":null}`}},
	{name: "an unknown label is recorded with a null profile", steps: []scriptStep{beforeWith("provider/custom-model")},
		check: func(t *testing.T, lines []string) {
			m := fields(t, lines[0])
			assert.Equal(t, "provider/custom-model", m["model_tier"])
			assert.Contains(t, m, "model_profile")
			assert.Nil(t, m["model_profile"])
		}},
	{name: "the neutral label standard", steps: []scriptStep{beforeWith("standard")},
		check: func(t *testing.T, lines []string) {
			assert.Equal(t, "standard", fields(t, lines[0])["model_profile"])
		}},
	{name: "an omitted model tier is null", steps: []scriptStep{beforeWith()},
		check: func(t *testing.T, lines []string) {
			m := fields(t, lines[0])
			assert.Nil(t, m["model_tier"])
			assert.Nil(t, m["model_profile"])
		}},
	{name: "an oversized model tier is nulled to keep the line atomic", steps: []scriptStep{beforeWith(strings.Repeat("x", 4100))},
		check: func(t *testing.T, lines []string) {
			assert.LessOrEqual(t, len(lines[0])+1, 4096)
			assert.Nil(t, fields(t, lines[0])["model_tier"])
		}},
	{name: "an oversized actual model is nulled to keep the line atomic", steps: []scriptStep{beforeWith("standard"),
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--actual-model", strings.Repeat("x", 4100), "--summary", "kept"}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		check: func(t *testing.T, lines []string) {
			require.Len(t, lines, 2)
			assert.LessOrEqual(t, len(lines[1])+1, 4096)
			m := fields(t, lines[1])
			assert.Nil(t, m["actual_model"])
			assert.Equal(t, "kept", m["summary"], "a short summary is kept: the label goes, not the summary")
			assert.Equal(t, "standard", m["model_tier"])
		}},
	{name: "a multibyte summary is cut by bytes", steps: []scriptStep{beforeWith("opus"),
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--summary", strings.Repeat("é", 8000)}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		check: func(t *testing.T, lines []string) {
			assert.LessOrEqual(t, len(lines[1])+1, 4096)
			assert.Equal(t, "opus", fields(t, lines[1])["model_tier"], "a huge summary is cut, a short label kept")
		}},
	{name: "a flag of a future Crucible is named and ignored", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "r", "--reasoning-effort", "high", "--model-tier", "opus", "--cache"},
			out: "dispatched seq 1 (1-plan-writer.md, 124 chars)\n",
			err: "warning: replay manifest before: ignoring unknown flag --reasoning-effort (a newer Crucible's?)\nwarning: replay manifest before: ignoring unknown flag --cache (a newer Crucible's?)\n"},
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--tokens=12", "--sumary", "x"},
			out: "completed seq 1 (1-plan-writer.md)\n",
			err: "warning: replay manifest after: ignoring unknown flag --tokens (a newer Crucible's?)\nwarning: replay manifest after: ignoring unknown flag --sumary (a newer Crucible's?); did you mean --summary?\n"}},
		check: func(t *testing.T, lines []string) {
			require.Len(t, lines, 2)
			assert.Equal(t, "opus", fields(t, lines[0])["model_tier"])
			assert.Nil(t, fields(t, lines[1])["summary"])
		}},
	{name: "a known flag's value that looks like a flag is its value", steps: []scriptStep{beforeWith("opus"),
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--summary", "--- done --x"}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		check: func(t *testing.T, lines []string) {
			assert.Equal(t, "--- done --x", fields(t, lines[1])["summary"])
		}},
	{name: "seq refuses across an interior line that names no seq",
		setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": "{\"seq\":1,\"x\":0}\n{corrupt interior line}\n{\"seq\":2,\"x\":0}\n"},
		steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, code: 1,
			err: "dispatch seq: 1 interior corrupt line(s) in manifest.jsonl — seq recovery unsafe, refusing to allocate (line 2 names no seq; run 'replay manifest repair --dir {D}' to move it to a sidecar)\n"}}},
	{name: "repair moves the line aside after a backup, then seq allocates again",
		setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": "{\"seq\":1,\"x\":0}\n{corrupt interior line}\n{\"seq\":2,\"x\":0}\n"},
		steps: []scriptStep{
			{args: []string{"repair", "--dir", "{D}", "--now", "2026-04-07T14:52:10Z"},
				out: "moved 1 corrupt line(s) (line 2) to {D}/manifest.jsonl.corrupt\nthe manifest as it was: {D}/manifest.jsonl.bak-1775573530\nundo: cp {D}/manifest.jsonl.bak-1775573530 {D}/manifest.jsonl\n"},
			{args: []string{"seq", "--dir", "{D}"}, out: "3\n"},
			{args: []string{"repair", "--dir", "{D}"}, out: "{D}/manifest.jsonl has no corrupt line: nothing to repair\n"}},
		manifest: []string{`{"seq":1,"x":0}`, `{"seq":2,"x":0}`},
		exist:    []string{"{D}/manifest.jsonl.corrupt", "{D}/manifest.jsonl.bak-1775573530"}},
}

func TestManifestLikeNewerDispatchPy(t *testing.T) {
	t.Parallel()
	runDispatchPyCases(t, newerDispatchPyCases)
}
