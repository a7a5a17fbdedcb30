package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSafe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want, text string }{
		{"plain", "build-implementer: Task 2 done (5 tests) — ok \\x1b", "build-implementer: Task 2 done (5 tests) — ok \\x1b", ""},
		{"NUL", "a\x00b", `a\x00b`, ""},
		{"ESC colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, ""},
		{"CR overwrites the line", "ok\rFAIL", `ok\rFAIL`, ""},
		{"bidi override", "txt.\u202egpj.exe", `txt.\u202egpj.exe`, ""},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`, ""},
		{"newline and tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"invalid UTF-8", "a\xffb", `a\xffb`, ""},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Safe(c.in))
			want := c.text
			if want == "" {
				want = c.want
			}
			assert.Equal(t, want, SafeText(c.in))
		})
	}
}

func TestTablesEscapeCells(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, TableStyle{}.Write(&b, []string{"Seq", "Summary"}, [][]string{{"1", "\x00\x1b[31mred\rx\u202e|y"}}))
	assert.Contains(t, b.String(), `\x00\x1b[31mred\rx\u202e\|y`)
	b.Reset()
	require.NoError(t, TableStyle{Text: true}.Write(&b, []string{"Seq", "Summary"}, [][]string{{"1", "\x1b[2Jgone"}}))
	assert.Contains(t, b.String(), `\x1b[2Jgone`)
	assert.NotContains(t, b.String(), "\x1b")
}

func TestPlanMarkdownEscapesValuesFromFiles(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	evil := "x\x00\x1b[31m\r\u202e"
	require.NoError(t, WritePlan(&b, &Plan{
		Source: "/m" + evil, Skill: evil, Session: evil, Started: evil, CrashedAt: evil, ResumePoint: evil,
		WorkPreserved: evil, Project: "/p" + evil,
		Skip:    []SkipRow{{Seq: 1, Role: evil, Phase: evil, Summary: evil}},
		Redo:    []RedoRow{{Seq: 2, Role: evil, Phase: evil, OriginalStatus: evil, Template: evil}},
		Partial: []string{evil}, Mutations: []string{evil}, Warnings: []string{evil},
	}, TableStyle{}))
	out := b.String()
	for _, bad := range []string{"\x00", "\x1b", "\r", "\u202e"} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, `x\x00\x1b[31m\r\u202e`)
}

// FuzzSafe checks that Safe's output never holds a control character, an override
// or invalid UTF-8, whatever the input, and that clean input is returned unchanged.
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"plain", "\x00", "\x1b[31m", "\r", "\u202e", "\xff\xfe", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Safe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Safe(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Safe(%q) = %q holds %U", s, out, r)
			}
		}
		if clean(s, false) && out != s {
			t.Fatalf("clean %q changed to %q", s, out)
		}
		if strings.ContainsAny(SafeText(s), "\x00\x1b\r\u202e") {
			t.Fatalf("SafeText(%q) kept an ESC", s)
		}
	})
}
