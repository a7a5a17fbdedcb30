package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/stretchr/testify/require"
)

// tablewriterMarkdown draws a markdown table with tablewriter, as TableStyle.Write
// did before writeMarkdown.
func tablewriterMarkdown(t *testing.T, header []string, rows [][]string) string {
	t.Helper()
	var b bytes.Buffer
	tbl := tablewriter.NewTable(&b,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	require.NoError(t, render(tbl, header, rows))
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
