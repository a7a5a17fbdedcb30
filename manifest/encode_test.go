package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAppendStringLikePython checks the string escaping against what Python's
// json.dumps(s, ensure_ascii=False) writes (the bytes were taken from Python 3.11).
func TestAppendStringLikePython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"short escapes", "\b\f\n\r\t\"\\/", `"\b\f\n\r\t\"\\/"`},
		{"other C0 controls as lowercase \\u00XX, DEL raw", "\x00\x01\x0b\x1b\x1f\x7f", `"\u0000\u0001\u000b\u001b\u001f` + "\x7f" + `"`},
		{"line and paragraph separators raw", "\u2028\u2029", "\"\u2028\u2029\""},
		{"non-ASCII raw", "héllo 日本 😀", `"héllo 日本 😀"`},
		{"HTML characters and C1 raw", "<>&\u00a0\u0085", "\"<>&\u00a0\u0085\""},
		{"U+FFFD raw", "\ufffd", "\"\ufffd\""},
		{"invalid UTF-8 becomes U+FFFD per byte", "a\xffb\xe2\x82", "\"a\ufffdb\ufffd\ufffd\""},
		{"empty", "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, string(appendString(nil, tt.in)))
		})
	}
}

// TestEncodeLineLikeScript pins whole lines, summary cuts included, to the bytes
// Crucible's scripts/dispatch.py writes for the same entry.
func TestEncodeLineLikeScript(t *testing.T) {
	t.Parallel()
	phase, task, tier, chars, dur := "2", 3, "opus", 124, 5.0
	sum := "a\bb\fc\x7fd\u2028e\u2029f\x01\x1f\"\\/\té<>&"
	e := Entry{Seq: 1, File: "1-plan-writer.md", Role: "plan-writer", Phase: &phase, Task: &task, Status: StatusCompleted,
		DurationS: &dur, Summary: &sum, InputChars: &chars, ModelTier: &tier}
	line, err := EncodeLine(e)
	require.NoError(t, err)
	assert.Equal(t, `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":"2","task":3,"status":"completed","duration_s":5,`+
		`"summary":"a\bb\fc`+"\x7f"+`d`+"\u2028"+`e`+"\u2029"+`f\u0001\u001f\"\\/\té<>&","input_chars":124,"output_chars":null,"model_tier":"opus","tool_calls":null}`+"\n", string(line))

	cuts := []struct {
		name    string
		summary string
		kept    string
	}{
		// The script keeps the longest prefix of whole characters that fits with "..."
		// (the kept lengths were taken from the script's output for these entries).
		{"ascii", strings.Repeat("s", 8000), strings.Repeat("s", 3890)},
		{"two-byte characters", strings.Repeat("é", 3000) + "xxxxxxxxxx", strings.Repeat("é", 1945)},
		{"four-byte characters", strings.Repeat("ab😀", 1500), strings.Repeat("ab😀", 648) + "ab"},
		{"escaped controls", strings.Repeat("\x01", 1000), strings.Repeat("\x01", 648)},
	}
	for _, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := c.summary
			e := Entry{Seq: 10, File: "1-plan-writer.md", Role: "r", Phase: new("null"), Status: StatusCompleted, Summary: &s, InputChars: &chars, ModelTier: &tier}
			line, err := EncodeLine(e)
			require.NoError(t, err)
			want := `{"seq":10,"file":"1-plan-writer.md","role":"r","phase":"null","task":null,"status":"completed","duration_s":null,"summary":` +
				string(appendString(nil, c.kept+"...")) + `,"input_chars":124,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n"
			assert.Equal(t, want, string(line))
			assert.LessOrEqual(t, len(line), MaxLineBytes)
		})
	}
}

func TestCountInputChars(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("crlf.md", "a\r\nb\rcé€😀")
	write("plain.md", "# Dispatch: plan-writer\n"+strings.Repeat("x", 100))
	write("bom.md", "\ufeffx")
	bad := map[string]string{
		"truncated.md":  "ok\xe2\x82",
		"badcont.md":    "ok\xe2\x28\xa1",
		"surrogate.md":  "ok\xed\xa0\x80",
		"trunc4.md":     "\xf0\x9f\x98",
		"overlong.md":   "\xc0\x80",
		"toobig.md":     "x\xf4\x90\x80\x80",
		"badcont4.md":   "\xf0\x9f\x28",
		"lonecont.md":   "\x80",
		"badthird.md":   "\xe2\x82\x28",
		"badfourth4.md": "\xf0\x9f\x98\x28",
	}
	for name, content := range bad {
		write(name, content)
	}
	tests := []struct {
		file string
		want *int
		warn string
	}{
		{file: "crlf.md", want: new(8)},
		{file: "plain.md", want: new(124)},
		{file: "bom.md", want: new(2)},
		{file: "truncated.md", warn: "'utf-8' codec can't decode bytes in position 2-3: unexpected end of data"},
		{file: "badcont.md", warn: "'utf-8' codec can't decode byte 0xe2 in position 2: invalid continuation byte"},
		{file: "surrogate.md", warn: "'utf-8' codec can't decode byte 0xed in position 2: invalid continuation byte"},
		{file: "trunc4.md", warn: "'utf-8' codec can't decode bytes in position 0-2: unexpected end of data"},
		{file: "overlong.md", warn: "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte"},
		{file: "toobig.md", warn: "'utf-8' codec can't decode byte 0xf4 in position 1: invalid continuation byte"},
		{file: "badcont4.md", warn: "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte"},
		{file: "lonecont.md", warn: "'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte"},
		{file: "badthird.md", warn: "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte"},
		{file: "badfourth4.md", warn: "'utf-8' codec can't decode bytes in position 0-2: invalid continuation byte"},
		{file: "missing.md", warn: "[Errno 2] No such file or directory: 'missing.md'"},
		{file: "it's.md", warn: `[Errno 2] No such file or directory: "it's.md"`},
		{file: "", warn: "[Errno 2] No such file or directory: ''"},
		{file: ".", warn: "[Errno 21] Is a directory: '.'"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			n, warn := CountInputChars(dir, tt.file)
			if tt.warn == "" {
				assert.Empty(t, warn)
				assert.Equal(t, tt.want, n)
				return
			}
			assert.Nil(t, n)
			assert.Equal(t, "[dispatch WARN] cannot read dispatch file "+tt.file+": "+tt.warn+"; input_chars set to null", warn)
		})
	}
	n, warn := CountInputChars("/elsewhere", filepath.Join(dir, "crlf.md"))
	assert.Empty(t, warn, "an absolute path ignores the working directory")
	assert.Equal(t, 8, *n)
}
