package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// DefaultWidth is the width a text table is drawn for when the terminal's is not
// known (no terminal and no COLUMNS).
const DefaultWidth = 100

// TableStyle says how every table of the tool is drawn: as a GitHub markdown
// table (for files, pipes and --format markdown) or as a plain ASCII grid for a
// terminal, and how wide a text table may get (0: no limit). Both are drawn by
// tablewriter, left-aligned and without auto-format, so golden files are stable.
//
// A text table keeps every word whole: when it is wider than Width, the widest
// columns are narrowed (never below their longest word) and tablewriter wraps
// their cells at spaces; when even the longest words do not fit side by side,
// each row is written as a block of "Header  value" lines. Only a single word
// wider than the whole line (a long path) is ever wider than Width. A markdown
// table is never wrapped (it is for files and other programs).
type TableStyle struct {
	Text  bool
	Width int
}

// Write renders one table in the style. Cells are escaped ("|" → "\|", newlines →
// " ", control characters and overrides as by Safe).
func (s TableStyle) Write(w io.Writer, header []string, rows [][]string) error {
	header, rows = escapeAll(header), escapeRows(rows)
	if !s.Text {
		return writeMarkdownTable(w, header, rows)
	}
	widths, fits := textWidths(header, rows, s.Width)
	if !fits {
		return writeRecords(w, header, rows, s.Width)
	}
	wrap := tw.WrapNone
	if widths != nil {
		wrap = tw.WrapNormal
	}
	// A first cell that repeats the row above is left blank (merged down), as
	// the explain table's boundaries are; no other column is merged.
	cfg := tablewriter.NewConfigBuilder().
		WithHeaderAutoFormat(tw.Off).WithHeaderAlignment(tw.AlignLeft).WithRowAlignment(tw.AlignLeft).
		WithHeaderAutoWrap(wrap).WithRowAutoWrap(wrap).
		Row().Merging().WithMode(tw.MergeVertical).ByColumnIndex([]int{0}).Build().Build().
		Build()
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithConfig(cfg),
	}
	if widths != nil {
		opts = append(opts, tablewriter.WithColumnWidths(widths))
	}
	return render(tablewriter.NewTable(w, opts...), header, rows)
}

// Cell returns text as a table cell of this style: clipped to n runes (Clip) in
// a markdown table, whose rows never wrap; whole in a text table, which wraps it,
// unless it is longer than 2n runes (an agent's whole answer), when it is cut
// after a word (ClipWords).
func (s TableStyle) Cell(text string, n int) string {
	if s.Text {
		return ClipWords(text, 2*n)
	}
	return Clip(text, n)
}

// writeMarkdownTable draws a markdown table: by writeMarkdown when it can (the
// same bytes, faster), else by tablewriter's markdown renderer.
func writeMarkdownTable(w io.Writer, header []string, rows [][]string) error {
	if done, err := writeMarkdown(w, header, rows); done || err != nil {
		return err
	}
	return render(markdownTable(w), header, rows)
}

// markdownTable is the tablewriter configuration of every markdown table.
func markdownTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
}

func render(t *tablewriter.Table, header []string, rows [][]string) error {
	h := make([]any, len(header))
	for i, c := range header {
		h[i] = c
	}
	t.Header(h...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return fmt.Errorf("table row: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return nil
}

// escapeCell makes a cell safe: line breaks become spaces, every other control
// character, escape sequence and override is shown escaped (Safe), and "|" cannot
// end the markdown cell.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(Safe(s), "|", `\|`)
}

// ClipWords shortens s to its words that fit in n runes, ending it with "..."
// when cut; a first word longer than n is kept whole.
func ClipWords(s string, n int) string {
	words := strings.Fields(s)
	out, size := make([]string, 0, len(words)), 0
	for i, w := range words {
		size += len([]rune(w)) + min(i, 1)
		if size > n && i > 0 {
			return strings.Join(out, " ") + " ..."
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// Clip shortens s to at most n runes, ending it with "..." when cut.
func Clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	if n <= 3 {
		return string(r[:n])
	}
	return string(r[:n-3]) + "..."
}
