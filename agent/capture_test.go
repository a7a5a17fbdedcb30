package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func captured(max int, chunks ...string) Response {
	c := newCapture(max)
	for _, ch := range chunks {
		_, _ = c.Write([]byte(ch))
	}
	var r Response
	c.fill(&r)
	return r
}

func TestCaptureSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		chunks  []string
		summary string
		verdict string
	}{
		{"first non-empty line", []string{"\n\n  hello  \nworld\n"}, "hello", ""},
		{"summary split across writes", []string{"a\nSUMM", "ARY: do", "ne\n"}, "done", ""},
		{"empty summary ignored", []string{"a\nSUMMARY:   \n"}, "a", ""},
		{"crlf", []string{"SUMMARY: x\r\n"}, "x", ""},
		{"verdict word", []string{"PASS\n"}, "PASS", "PASS"},
		{"verdict line", []string{"Verdict: **blocked** by X\nSUMMARY: s\n"}, "s", "BLOCKED"},
		{"not a verdict", []string{"PASSED\n"}, "PASSED", ""},
		{"nothing", nil, NoOutputSummary, ""},
		{"control characters", []string{"a\tb\x1bc\n"}, "a b c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := captured(MaxOutputBytes, tt.chunks...)
			assert.Equal(t, tt.summary, r.Summary)
			assert.Equal(t, tt.verdict, r.Verdict)
		})
	}
}

func TestCaptureSummaryIsClipped(t *testing.T) {
	t.Parallel()
	r := captured(MaxOutputBytes, "SUMMARY: "+strings.Repeat("é", 1000)+"\n")
	assert.Equal(t, MaxSummaryRunes, utf8.RuneCountInString(r.Summary))
	assert.True(t, strings.HasSuffix(r.Summary, "…"))
}

func TestCaptureCapKeepsWholeRunes(t *testing.T) {
	t.Parallel()
	r := captured(5, "ab", "cdé", "fg\n") // é is 2 bytes: the cap falls inside it
	assert.Equal(t, "abcd", string(r.Output))
	assert.True(t, r.Truncated)
	assert.Equal(t, 8, r.OutputChars)

	r = captured(5, "abcde")
	assert.False(t, r.Truncated, "exactly the cap is not truncated")
	assert.Equal(t, "abcde", string(r.Output))
}

func FuzzCapture(f *testing.F) {
	for _, s := range []string{"", "a\nSUMMARY: x\n", "héllo ✓\nPASS\n", "\xff\xfe\n", strings.Repeat("z", 100) + "\nSUMMARY: tail"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		const max = 16
		whole := captured(max, string(data))
		var chunks []string
		for rest, n := string(data), int(split%7)+1; len(rest) > 0; {
			k := min(n, len(rest))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		parts := captured(max, chunks...)
		require.Equal(t, whole, parts, "chunking must not change the result")
		assert.True(t, strings.HasPrefix(string(data), string(whole.Output)))
		assert.LessOrEqual(t, len(whole.Output), max)
		assert.Equal(t, len(data) > max, whole.Truncated)
		if utf8.Valid(data) {
			assert.Equal(t, utf8.RuneCount(data), whole.OutputChars)
			assert.True(t, utf8.Valid(whole.Output))
		}
		assert.LessOrEqual(t, utf8.RuneCountInString(whole.Summary), MaxSummaryRunes)
		assert.NotContains(t, whole.Summary, "\n")
	})
}
