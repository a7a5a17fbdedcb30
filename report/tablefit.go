package report

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwarp"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// textWidths returns the width of each column (its content and its two spaces of
// padding, as tablewriter's WithColumnWidths takes them) of a text table of these
// cells at most width columns wide: every line is the columns plus one bar each
// and one more ("| a | b |"). It is nil when the table fits as it is (or width
// is 0: no limit). Columns give up one column at a time, never below their
// longest word, so tablewriter's wrap at spaces (tw.WrapNormal) breaks no word:
// each time the column whose cells (its header among them) gain the fewest lines
// by it, the widest of those; fits is false when the longest words cannot all
// stand side by side.
func textWidths(header []string, rows [][]string, width int) (widths tw.Mapper[int, int], fits bool) {
	if width <= 0 {
		return nil, true
	}
	cols := len(header)
	natural, least := make([]int, cols), make([]int, cols)
	cells := make([][]int, cols) // the display width of every cell, per column
	measure := func(r []string) {
		for i, c := range r {
			if i >= cols {
				break
			}
			cw := twwidth.Width(c)
			cells[i] = append(cells[i], cw)
			natural[i] = max(natural[i], cw)
			for _, word := range twwarp.SplitWords(c) {
				least[i] = max(least[i], twwidth.Width(word))
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	room := width - 3*cols - 1
	total, floor := 0, 0
	for i := range natural {
		natural[i], least[i] = max(natural[i], 1), max(least[i], 1)
		total += natural[i]
		floor += least[i]
	}
	if total <= room {
		return nil, true
	}
	if floor > room {
		return nil, false
	}
	// lines estimates how many lines column i's cells take at width w.
	lines := func(i, w int) int {
		n := 0
		for _, cw := range cells[i] {
			n += max(1, (cw+w-1)/w)
		}
		return n
	}
	for ; total > room; total-- {
		best, bestCost := -1, 0
		for i, w := range natural {
			if w <= least[i] {
				continue
			}
			cost := lines(i, w-1) - lines(i, w)
			if best < 0 || cost < bestCost || cost == bestCost && w > natural[best] {
				best, bestCost = i, cost
			}
		}
		natural[best]--
	}
	widths = tw.NewMapper[int, int]()
	for i, w := range natural {
		widths.Set(i, w+2)
	}
	return widths, true
}

// writeRecords writes a table too wide for width as one block per row, a blank
// line between rows: the row's first cell as a heading "Header: value" (left out
// when it repeats the row above, as tablewriter's hierarchical merge leaves it
// out of a grid), then its other cells as "Header: value", indented, as many to a
// line as fit, joined by " | "; a cell wider than a line is wrapped at spaces by
// tablewriter's wrapper. No word is broken (a word wider than the line stays
// whole).
func writeRecords(w io.Writer, header []string, rows [][]string, width int) error {
	var b strings.Builder
	prev := ""
	for n, r := range rows {
		cells := make([]string, len(header))
		for i, h := range header {
			cells[i] = h + ":"
			if i < len(r) && r[i] != "" {
				cells[i] += " " + r[i]
			}
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		if n == 0 || cells[0] != prev {
			writeRecordLines(&b, cells[:1], "", width)
		}
		prev = cells[0]
		writeRecordLines(&b, cells[1:], "  ", width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRecordLines writes cells as many to a line as fit in width, each line
// starting with indent; a cell wider than a line is wrapped at spaces
// (twwarp.WrapString), its further lines indented two more.
func writeRecordLines(b *strings.Builder, cells []string, indent string, width int) {
	room := width - len(indent)
	line := ""
	flush := func() {
		if line != "" {
			b.WriteString(indent + line + "\n")
			line = ""
		}
	}
	for _, cell := range cells {
		switch {
		case line != "" && twwidth.Width(line)+3+twwidth.Width(cell) <= room:
			line += " | " + cell
		case twwidth.Width(cell) <= room:
			flush()
			line = cell
		default:
			flush()
			wrapped, _ := twwarp.WrapString(cell, room-2)
			b.WriteString(indent + wrapped[0] + "\n")
			for _, l := range wrapped[1:] {
				b.WriteString(indent + "  " + l + "\n")
			}
		}
	}
	flush()
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
