package manifest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopyContextLikePython pins the re-encoding of copied fields to what the script
// writes after json.loads and json.dumps (taken from Python 3.11).
func TestCopyContextLikePython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		want map[string]string
	}{
		{name: "a line written by before", line: `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":"2","task":3,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","tool_calls":null}`,
			want: map[string]string{"file": `"1-plan-writer.md"`, "role": `"plan-writer"`, "phase": `"2"`, "task": `3`, "input_chars": `124`, "model_tier": `"opus"`}},
		{name: "missing keys are null, other types kept", line: `{"seq":1,"role":"r","phase":3,"task":"2","status":"dispatched","input_chars":1.0,"model_tier":null}`,
			want: map[string]string{"file": `null`, "role": `"r"`, "phase": `3`, "task": `"2"`, "input_chars": `1.0`, "model_tier": `null`}},
		{name: "escapes, nesting, duplicate keys", line: `{"seq":2,"file":"a\u0041\u2028.md","role":["x",{"b":1,"a":2,"b":3}],"phase":"\u00e9","task":-0,"status":"dispatched","input_chars":1e16,"model_tier":"opus"}`,
			want: map[string]string{"file": "\"aA\u2028.md\"", "role": `["x",{"b":3,"a":2}]`, "phase": `"é"`, "task": `0`, "input_chars": `1e+16`, "model_tier": `"opus"`}},
		{name: "floats as Python's repr", line: `{"file":false,"role":-1.25e300,"phase":1e-5,"task":100000000000000000.0,"input_chars":-0.0,"model_tier":0.0001}`,
			want: map[string]string{"file": `false`, "role": `-1.25e+300`, "phase": `1e-05`, "task": `1e+17`, "input_chars": `-0.0`, "model_tier": `0.0001`}},
		{name: "big integers and tiny floats", line: `{"task":12345678901234567890,"input_chars":1.5e-7,"phase":1e15,"role":123.456}`,
			want: map[string]string{"file": `null`, "role": `123.456`, "phase": `1000000000000000.0`, "task": `12345678901234567890`, "input_chars": `1.5e-07`, "model_tier": `null`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CopyContext([]byte(tt.line))
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for k, v := range tt.want {
				assert.Equal(t, v, string(got[k]), k)
			}
		})
	}
	_, err := CopyContext([]byte(`[1]`))
	assert.Error(t, err)
}

// TestEncodeWithCopiedContext checks a completion line writes the copied values in
// place of the typed fields, in the script's key order.
func TestEncodeWithCopiedContext(t *testing.T) {
	t.Parallel()
	copied, err := CopyContext([]byte(`{"seq":1,"role":"r","phase":3,"task":"2","status":"dispatched","input_chars":1.0,"model_tier":null}`))
	require.NoError(t, err)
	line, err := EncodeLine(Entry{Seq: 1, Status: StatusCompleted, Extra: copied})
	require.NoError(t, err)
	assert.Equal(t, `{"seq":1,"file":null,"role":"r","phase":3,"task":"2","status":"completed","duration_s":null,"summary":null,"input_chars":1.0,"output_chars":null,"model_tier":null,"tool_calls":null}`+"\n", string(line))
}

func TestPyText(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{`"a.md"`: "a.md", `null`: "None", ``: "None", `true`: "True", `false`: "False", `5`: "5", `1e16`: "1e+16", `[1, 2]`: "[1,2]"} {
		assert.Equal(t, want, PyText(json.RawMessage(raw)), raw)
	}
}

func TestFindDispatchedLikePython(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), ManifestFile, strings.Join([]string{
		`{"seq":1,"status":"dispatched","role":["odd"]}`,
		`{"seq":2.0,"status":"dispatched","file":"first"}`,
		`{"seq":2,"status":"completed"}`,
		`{"seq":2,"status":"dispatched","file":"second"}`,
		`{"seq":true,"status":"dispatched","file":"true is 1"}`,
		`{"seq":3,"status":"dispatched"`,
		`[3]`,
	}, "\n")+"\n")
	tests := []struct {
		seq  int
		want string
	}{
		{1, `{"seq":true,"status":"dispatched","file":"true is 1"}`},
		{2, `{"seq":2,"status":"dispatched","file":"second"}`},
		{3, ""},
		{4, ""},
	}
	for _, tt := range tests {
		got, err := FindDispatched(path, tt.seq)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(got), "seq %d", tt.seq)
	}
}
