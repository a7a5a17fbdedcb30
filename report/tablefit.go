package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// minColumn is the narrowest a column is made to fit the width (its header wraps
// too); a table whose columns cannot all be this wide is written one record per block.
const minColumn = 8

// columnWidths returns the width of each column of a text table of these cells that
// is at most width columns wide: each table line is the cells plus three characters
// a column and one more ("| a | b |"). The widest column gives up a column at a time,
// never below minColumn (or its own width); ok is false when the table cannot fit.
func columnWidths(header []string, rows [][]string, width int) (widths []int, ok bool) {
	widths = make([]int, len(header))
	measure := func(r []string) {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], runewidth.StringWidth(c))
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	for total > width {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minColumn {
			return widths, false
		}
		widths[widest]--
		total--
	}
	return widths, true
}

// wrapCells wraps every cell in place to its column's width (wrapText).
func wrapCells(widths []int, header []string, rows [][]string) {
	wrap := func(r []string) {
		for i, c := range r {
			if i < len(widths) {
				r[i] = strings.Join(wrapText(c, widths[i]), "\n")
			}
		}
	}
	wrap(header)
	for _, r := range rows {
		wrap(r)
	}
}

// wrapText breaks s into lines at most width columns wide, at spaces where it can and
// inside a word longer than a line where it must. Nothing is dropped but the spaces
// at the breaks.
func wrapText(s string, width int) []string {
	if width < 1 || runewidth.StringWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	var line strings.Builder
	lineWidth := 0
	flush := func() {
		lines = append(lines, line.String())
		line.Reset()
		lineWidth = 0
	}
	for _, word := range strings.Fields(s) {
		ww := runewidth.StringWidth(word)
		if lineWidth > 0 && lineWidth+1+ww > width {
			flush()
		}
		if lineWidth > 0 {
			line.WriteByte(' ')
			lineWidth++
		}
		for ww > width-lineWidth {
			// A word longer than the rest of the line: break it.
			head := runewidth.Truncate(word, width-lineWidth, "")
			if head == "" {
				flush()
				continue
			}
			line.WriteString(head)
			flush()
			word = word[len(head):]
			ww = runewidth.StringWidth(word)
		}
		line.WriteString(word)
		lineWidth += ww
	}
	if lineWidth > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// writeRecords writes a table too wide for width as one block per row: a line
// "Header: value" per cell (the value wrapped under itself), a blank line between rows.
func writeRecords(w io.Writer, header []string, rows [][]string, width int) error {
	label := 0
	for _, h := range header {
		label = max(label, runewidth.StringWidth(h)+2)
	}
	valueWidth := max(width-label, minColumn)
	var b strings.Builder
	for n, r := range rows {
		if n > 0 {
			b.WriteByte('\n')
		}
		for i, h := range header {
			v := ""
			if i < len(r) {
				v = r[i]
			}
			for j, line := range wrapText(v, valueWidth) {
				if j == 0 {
					b.WriteString(runewidth.FillRight(h+":", label))
				} else {
					b.WriteString(strings.Repeat(" ", label))
				}
				b.WriteString(strings.TrimRight(line, " "))
				b.WriteByte('\n')
			}
		}
	}
	_, err := fmt.Fprint(w, b.String())
	return err
}

// escapeAll returns the escaped copies of cells (escapeCell).
func escapeAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = escapeCell(c)
	}
	return out
}

func escapeRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = escapeAll(r)
	}
	return out
}
