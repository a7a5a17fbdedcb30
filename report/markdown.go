package report

import (
	"bufio"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// writeMarkdown draws a markdown table the way tablewriter's markdown renderer does
// with TableStyle's settings (left-aligned, no wrapping, no auto-format), byte for
// byte, in one pass over the cells: tablewriter spends about 18 µs a row on its
// general machinery, which made it a sixth of a 2,000-dispatch plan. It handles the
// tables whose cells are all "plain" (see plainCell) and whose rows all have the
// header's number of cells; for any other table it returns false and writes nothing,
// and the caller draws it with tablewriter. TestMarkdownMatchesTablewriter checks
// the two agree; BenchmarkMarkdownTable measures the gain in the same run (a
// 2,000-row table: 5.3 ms against 242 ms by tablewriter on 2026-11-29, under load).
func writeMarkdown(w io.Writer, header []string, rows [][]string) (bool, error) {
	if len(header) == 0 {
		return false, nil
	}
	widths := make([]int, len(header))
	if !measureRow(widths, header) {
		return false, nil
	}
	for _, r := range rows {
		if len(r) != len(header) || !measureRow(widths, r) {
			return false, nil
		}
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	writeMarkdownLine(bw, widths, header)
	bw.WriteByte('|')
	for _, wd := range widths {
		bw.WriteByte(':')
		bw.WriteString(strings.Repeat("-", max(wd+2, 3)-1))
		bw.WriteByte('|')
	}
	bw.WriteByte('\n')
	for _, r := range rows {
		writeMarkdownLine(bw, widths, r)
	}
	return true, bw.Flush()
}

// measureRow widens widths to the display width of the row's cells; false when a
// cell is not plain.
func measureRow(widths []int, row []string) bool {
	for i, c := range row {
		if !plainCell(c) {
			return false
		}
		widths[i] = max(widths[i], cellWidth(c))
	}
	return true
}

// writeMarkdownLine writes "| a   | b |": each cell padded with spaces to its
// column's width, one space either side, at least three characters between bars.
func writeMarkdownLine(bw *bufio.Writer, widths []int, row []string) {
	bw.WriteByte('|')
	for i, c := range row {
		bw.WriteByte(' ')
		bw.WriteString(c)
		pad := max(widths[i]+2, 3) - 1 - cellWidth(c)
		for ; pad > 0; pad-- {
			bw.WriteByte(' ')
		}
		bw.WriteByte('|')
	}
	bw.WriteByte('\n')
}

// cellWidth is a cell's display width, as tablewriter measures it.
func cellWidth(c string) int {
	for i := 0; i < len(c); i++ {
		if c[i] >= 0x80 {
			return twwidth.Width(c)
		}
	}
	return len(c)
}

// plainCell reports whether a cell is one writeMarkdown draws as tablewriter does:
// no white space at either end (tablewriter trims it) and no control character
// (escaped cells have none).
func plainCell(c string) bool {
	if c == "" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(c)
	last, _ := utf8.DecodeLastRuneInString(c)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return false
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; b < 0x20 || b == 0x7f {
			return false
		}
	}
	return true
}
