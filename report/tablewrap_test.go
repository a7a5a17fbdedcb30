package report

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTextTableWrapsCellsToTheWidth(t *testing.T) {
	t.Parallel()
	why := "The newest pre-wave-2 checkpoint of this run is the last boundary before which every dispatch is verified complete"
	header := []string{"Boundary", "Why it resumes there"}
	rows := [][]string{{"phase 3 wave 2", why}, {"phase 3 wave 1", "verified"}}
	var b strings.Builder
	require.NoError(t, TableStyle{Text: true, Width: 60}.Write(&b, header, rows))
	out := b.String()
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		assert.LessOrEqual(t, runewidth.StringWidth(line), 60, line)
	}
	for _, word := range strings.Fields(why) {
		assert.Contains(t, out, word, "no word is cut")
	}
	assert.NotContains(t, out, "…")
}

// A table whose longest words cannot stand side by side is one block per row:
// its first cell as a heading, then its other cells as "Header: value", as many
// to a line as fit.
func TestTextTableTooNarrowIsOneRecordPerBlock(t *testing.T) {
	t.Parallel()
	header := []string{"Seq", "Role", "Phase", "Task", "Original Status", "Template"}
	rows := [][]string{{"19", "build-implementer", "3 (wave 2)", "t3", "dispatched → error → dispatched", "build-implementer"}, {"20", "r", "3", "t4", "dispatched", "x"}}
	var b strings.Builder
	require.NoError(t, TableStyle{Text: true, Width: 40}.Write(&b, header, rows))
	assert.Equal(t, `Seq: 19
  Role: build-implementer
  Phase: 3 (wave 2) | Task: t3
  Original Status: dispatched → error
    → dispatched
  Template: build-implementer

Seq: 20
  Role: r | Phase: 3 | Task: t4
  Original Status: dispatched
  Template: x
`, b.String())
}

func TestMarkdownTableKeepsLongCells(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40)
	var b strings.Builder
	require.NoError(t, TableStyle{Width: 40}.Write(&b, []string{"A", "B"}, [][]string{{"1", long}}))
	assert.Contains(t, b.String(), strings.TrimSpace(long))
}

// A block whose first cell repeats the row above leaves it out, as the grid's
// hierarchical merge does.
func TestTextTableRecordsLeaveOutARepeatedFirstCell(t *testing.T) {
	t.Parallel()
	header := []string{"Boundary", "Seq", "Role", "Detail"}
	rows := [][]string{{"pre-wave-2", "1", "innovate", "output 1-innovate-proposals.md"}, {"pre-wave-2", "2", "red-team", "output 2-red-team-findings.md"}}
	var b strings.Builder
	require.NoError(t, TableStyle{Text: true, Width: 30}.Write(&b, header, rows))
	assert.Equal(t, `Boundary: pre-wave-2
  Seq: 1 | Role: innovate
  Detail: output
    1-innovate-proposals.md

  Seq: 2 | Role: red-team
  Detail: output
    2-red-team-findings.md
`, b.String())
}

// In a grid, a first cell that repeats the row above is left blank; a repeated
// cell of another column is not.
func TestTextTableMergesOnlyTheFirstColumn(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	require.NoError(t, TableStyle{Text: true, Width: 100}.Write(&b, []string{"Boundary", "Seq", "Verdict"},
		[][]string{{"pre-wave-2", "1", "ok"}, {"pre-wave-2", "2", "ok"}, {"pre-wave-1", "3", "ok"}}))
	assert.Equal(t, `+------------+-----+---------+
| Boundary   | Seq | Verdict |
+------------+-----+---------+
| pre-wave-2 | 1   | ok      |
|            | 2   | ok      |
| pre-wave-1 | 3   | ok      |
+------------+-----+---------+
`, b.String())
}

// Over random tables and widths, a text table keeps every word whole and no line
// is wider than the width, unless a single word is wider than a line.
func TestTextTableKeepsWordsWithinTheWidth(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"a", "Task", "build-implementer", "42", "3", "(wave", "1)", "→", "漢字", "🙂", "é", "|", "completed", "a6a0009", "pre-wave-2", "1-innovate-proposals.md"}
	cell := func() string {
		parts := make([]string, r.IntN(8))
		for i := range parts {
			parts[i] = words[r.IntN(len(words))]
		}
		return strings.Join(parts, " ")
	}
	for n := range 500 {
		cols := 1 + r.IntN(8)
		header := make([]string, cols)
		for i := range header {
			header[i] = cell()
		}
		rows := make([][]string, 1+r.IntN(5))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = cell()
			}
		}
		width := 20 + r.IntN(100)
		var b strings.Builder
		require.NoError(t, TableStyle{Text: true, Width: width}.Write(&b, header, rows))
		out := b.String()
		widest := 0
		for _, row := range append([][]string{header}, rows...) {
			for _, c := range row {
				for _, w := range strings.Fields(escapeCell(c)) {
					require.Contains(t, out, w, "table %d: a word is kept whole", n)
					widest = max(widest, runewidth.StringWidth(w))
				}
			}
		}
		if widest+len("  Header: ") > width {
			continue
		}
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			require.LessOrEqual(t, runewidth.StringWidth(line), width, "table %d at width %d: %q\n%s", n, width, line, out)
		}
	}
}
