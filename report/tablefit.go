package report

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// minColumn is the narrowest a column is cut to (its header may be cut too).
const minColumn = 6

// ellipsis ends a cell that was cut to fit the width.
const ellipsis = "…"

// fitWidth cuts cells in place so that a table of these cells is at most width
// columns wide: each table line is the cells plus three characters a column and
// one more ("| a | b |"). The widest column gives up a column at a time, never
// below minColumn; when every column is that narrow the table stays wider.
func fitWidth(header []string, rows [][]string, width int) {
	widths := make([]int, len(header))
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
			break
		}
		widths[widest]--
		total--
	}
	cut := func(r []string) {
		for i, c := range r {
			if i < len(widths) && runewidth.StringWidth(c) > widths[i] {
				r[i] = strings.TrimRight(runewidth.Truncate(c, widths[i]-1, ""), " ") + ellipsis
			}
		}
	}
	cut(header)
	for _, r := range rows {
		cut(r)
	}
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
