package manifest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		check  func(t *testing.T, e Entry)
		errSub string
	}{
		{name: "spec line", in: `{"seq":12,"file":"12-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"completed","duration_s":388,"summary":"Task 2 done, 5 tests","input_chars":13980,"output_chars":4870,"model_tier":"opus","tool_calls":27}`,
			check: func(t *testing.T, e Entry) {
				assert.Equal(t, 12, e.Seq)
				assert.Equal(t, "12-build-implementer.md", e.File)
				assert.Equal(t, "3", *e.Phase)
				assert.Equal(t, 2, *e.Task)
				assert.Equal(t, 388.0, *e.DurationS)
				assert.Equal(t, "Task 2 done, 5 tests", *e.Summary)
				assert.Equal(t, 27, *e.ToolCalls)
			}},
		{name: "pretty spacing and escapes", in: ` { "seq" : 1 , "status" : "failed", "summary": "a\"b\u00e9\n", "role": "r\u00e9" } `,
			check: func(t *testing.T, e Entry) {
				assert.Equal(t, "a\"bé\n", *e.Summary)
				assert.Equal(t, "ré", e.Role)
			}},
		{name: "numeric phase, string task, integral float", in: `{"seq":2.0,"phase":4,"task":"3","status":"skipped","input_chars":1e3}`,
			check: func(t *testing.T, e Entry) {
				assert.Equal(t, 2, e.Seq)
				assert.Equal(t, "4", *e.Phase)
				assert.Equal(t, 3, *e.Task)
				assert.Equal(t, 1000, *e.InputChars)
			}},
		{name: "empty phase is null", in: `{"seq":2,"phase":"","status":"error"}`,
			check: func(t *testing.T, e Entry) { assert.Nil(t, e.Phase) }},
		{name: "replay fields", in: `{"seq":21,"status":"dispatched","replay_of":19,"replay_session":"1775500000","mutation":"a.md -> b.md"}`,
			check: func(t *testing.T, e Entry) {
				assert.Equal(t, 19, *e.ReplayOf)
				assert.Equal(t, "a.md -> b.md", *e.Mutation)
			}},
		{name: "invalid utf-8 becomes U+FFFD", in: "{\"seq\":1,\"status\":\"completed\",\"summary\":\"a\xffb\"}",
			check: func(t *testing.T, e Entry) { assert.Equal(t, "a\uFFFDb", *e.Summary) }},
		{name: "no seq", in: `{"status":"completed"}`, errSub: `no "seq" field`},
		{name: "no status", in: `{"seq":4}`, errSub: `seq 4: no "status" field`},
		{name: "unknown status", in: `{"seq":4,"status":"running"}`, errSub: `unknown status "running"`},
		{name: "seq string", in: `{"seq":"4","status":"completed"}`, errSub: `"seq" must be a whole number`},
		{name: "seq fraction", in: `{"seq":4.5,"status":"completed"}`, errSub: `"seq" must be a whole number`},
		{name: "seq negative", in: `{"seq":-1,"status":"completed"}`, errSub: `out of range`},
		{name: "role object", in: `{"seq":4,"status":"completed","role":{}}`, errSub: `"role": want a string, got an object`},
		{name: "task word", in: `{"seq":4,"status":"completed","task":"two"}`, errSub: `"task" must be a whole number or null`},
		{name: "chars bool", in: `{"seq":4,"status":"completed","input_chars":true}`, errSub: `"input_chars" must be a whole number or null`},
		{name: "array", in: `[1,2]`, errSub: "not a JSON object"},
		{name: "trailing data", in: `{"seq":1,"status":"completed"} x`, errSub: "data after the end"},
		{name: "two objects", in: `{"seq":1,"status":"completed"}{"seq":2,"status":"completed"}`, errSub: "data after the end"},
		{name: "torn", in: `{"seq":20,"file":"20-build-rev`, errSub: "not closed"},
		{name: "control char", in: "{\"seq\":1,\"status\":\"completed\",\"summary\":\"a\x01\"}", errSub: "control character"},
		{name: "deep nesting", in: `{"seq":1,"status":"completed","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, errSub: "nested too deeply"},
		{name: "bad literal", in: `{"seq":1,"status":nul}`, errSub: "bad literal"},
		{name: "nul bytes", in: "\x00\x01\x02", errSub: "binary data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ParseLine([]byte(tt.in))
			if tt.errSub != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errSub)
				return
			}
			require.NoError(t, err)
			tt.check(t, e)
		})
	}
}

func TestEncodeLineRoundTrip(t *testing.T) {
	t.Parallel()
	phase, task, sum, tier, dur := "3", 2, "héllo \"world\"\n\u2028", "opus", 12.25
	e := Entry{Seq: 12, File: "12-x.md", Role: "build-reviewer", Phase: &phase, Task: &task, Status: StatusCompleted,
		DurationS: &dur, Summary: &sum, ModelTier: &tier, ReplayOf: &task,
		Extra: map[string]json.RawMessage{"zz": json.RawMessage(`{ "k" : "v w" }`), "aa": json.RawMessage(`1`)}}
	line, err := EncodeLine(e)
	require.NoError(t, err)
	assert.True(t, json.Valid(line[:len(line)-1]))
	assert.True(t, strings.HasPrefix(string(line), `{"seq":12,"file":"12-x.md","role":"build-reviewer","phase":"3","task":2,"status":"completed","duration_s":12.25,"summary":"héllo \"world\"\n`+"\u2028"+`","input_chars":null,"output_chars":null,"model_tier":"opus","tool_calls":null,"replay_of":2,"aa":1,"zz":{"k":"v w"}}`), string(line))
	got, err := ParseLine(line)
	require.NoError(t, err)
	again, err := EncodeLine(got)
	require.NoError(t, err)
	assert.Equal(t, string(line), string(again))
}

func TestEncodeLineTruncatesSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary string
	}{
		{"ascii 5000 bytes", strings.Repeat("a", 5000)},
		{"multibyte", strings.Repeat("é日", 2000)},
		{"escapes grow", strings.Repeat("\"\x01", 3000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.summary
			line, err := EncodeLine(Entry{Seq: 15, File: "15-build-reviewer.md", Role: "build-reviewer", Status: StatusCompleted, Summary: &s})
			require.NoError(t, err)
			assert.LessOrEqual(t, len(line), MaxLineBytes)
			assert.Greater(t, len(line), MaxLineBytes-64, "the summary keeps as much as fits")
			e, err := ParseLine(line)
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(*e.Summary, "..."))
			assert.True(t, utf8.ValidString(*e.Summary))
			assert.True(t, strings.HasPrefix(tt.summary, strings.TrimSuffix(*e.Summary, "...")))
		})
	}
}

func TestEncodeLineTooBigWithoutSummary(t *testing.T) {
	t.Parallel()
	_, err := EncodeLine(Entry{Seq: 1, Role: strings.Repeat("r", 5000), Status: StatusCompleted})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "seq 1: the manifest line is")
}

func TestEncodeLineRefusesBadEntries(t *testing.T) {
	t.Parallel()
	_, err := EncodeLine(Entry{Seq: 1})
	assert.ErrorContains(t, err, `seq 1: status "" is not dispatched`)
	_, err = EncodeLine(Entry{Seq: -1, Status: StatusCompleted})
	assert.ErrorContains(t, err, "seq -1 is out of range")
}

func TestEntryJSON(t *testing.T) {
	t.Parallel()
	var e Entry
	require.NoError(t, json.Unmarshal([]byte(`{"seq":3,"status":"completed","extra":"kept"}`), &e))
	out, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"tool_calls":null,"extra":"kept"}`)
}
