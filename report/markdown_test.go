package report

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tablewriterMarkdown draws a markdown table with tablewriter's markdown
// renderer, as TableStyle.Write does for a table writeMarkdown does not handle.
func tablewriterMarkdown(t *testing.T, header []string, rows [][]string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, render(markdownTable(&b), header, rows))
	return b.String()
}

// cellParts are the pieces random cells are made of: words, punctuation markdown
// cares about, wide, ambiguous, combining and zero-width characters, and spaces.
var cellParts = []string{
	"a", "Task", "build-implementer", "42", "3 (wave 1)", " ", "  ", "-", ":", "|", `\|`, `\`, "*", "`", "<b>", "&amp;",
	"→", "—", "…", "é", "e\u0301", "漢字", "🙂", "👩\u200d💻", "\u200b", "ｱ", "±", "§", "\u00a0", "\u2003", "\u3000", "\u0085", "\ufeff", "\\x1b", "\\n", "",
}

func randomCell(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(5) {
		b.WriteString(cellParts[r.IntN(len(cellParts))])
	}
	return b.String()
}

// Wherever writeMarkdown draws a table, it draws it byte for byte as tablewriter.
func TestMarkdownMatchesTablewriter(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	drawn := 0
	for n := range 3000 {
		cols := 1 + r.IntN(5)
		header := make([]string, cols)
		for i := range header {
			header[i] = randomCell(r)
		}
		rows := make([][]string, r.IntN(6))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = randomCell(r)
			}
		}
		header, rows = escapeAll(header), escapeRows(rows)
		var fast bytes.Buffer
		ok, err := writeMarkdown(&fast, header, rows)
		require.NoError(t, err)
		if !ok {
			require.Zero(t, fast.Len(), "table %d: written though not handled", n)
			continue
		}
		drawn++
		require.Equal(t, tablewriterMarkdown(t, header, rows), fast.String(), "table %d: %q %q", n, header, rows)
	}
	t.Logf("%d of 3000 random tables drawn by writeMarkdown", drawn)
}

// BenchmarkMarkdownTable draws the skip table of a 2,000-dispatch plan by
// writeMarkdown and by tablewriter's markdown renderer, in the same run: the
// ratio is why writeMarkdown stays beside tablewriter for markdown.
func BenchmarkMarkdownTable(b *testing.B) {
	header := []string{"Seq", "Role", "Phase", "Summary"}
	rows := make([][]string, 2000)
	for i := range rows {
		rows[i] = []string{strconv.Itoa(i + 1), "build-implementer", "3 (wave 1)", "Task 1 done: login form validation, 6 tests"}
	}
	b.Run("writeMarkdown", func(b *testing.B) {
		for b.Loop() {
			if ok, err := writeMarkdown(io.Discard, header, rows); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("tablewriter", func(b *testing.B) {
		for b.Loop() {
			if err := render(markdownTable(io.Discard), header, rows); err != nil {
				b.Fatal(err)
			}
		}
	})
}
