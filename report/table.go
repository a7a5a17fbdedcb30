package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// TableStyle says how every table of the tool is drawn: as a GitHub markdown
// table (the default, and always in files) or as a plain ASCII grid for a
// terminal, and how wide a line may get (0: no limit). Tables keep their content:
// in a text table that is too wide, the widest columns are narrowed and their
// cells wrapped onto more lines; when the columns cannot all fit, each row is
// written as a block of "Header: value" lines. A markdown table is never cut or
// wrapped (it is for files and other programs). The layout is fixed
// (left-aligned, no auto-format) so golden files are stable.
type TableStyle struct {
	Text  bool
	Width int
}

// Write renders one table in the style. Cells are escaped ("|" → "\|", newlines →
// " ", control characters and overrides as by Safe).
func (s TableStyle) Write(w io.Writer, header []string, rows [][]string) error {
	header, rows = escapeAll(header), escapeRows(rows)
	if s.Text && s.Width > 0 {
		widths, ok := columnWidths(header, rows, s.Width)
		if !ok {
			return writeRecords(w, header, rows, s.Width)
		}
		wrapCells(widths, header, rows)
	}
	if !s.Text {
		if done, err := writeMarkdown(w, header, rows); done || err != nil {
			return err
		}
	}
	var r tw.Renderer = renderer.NewMarkdown()
	if s.Text {
		r = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	return render(t, header, rows)
}

// MarkdownTable writes a markdown table with no width limit: TableStyle{}.Write.
func MarkdownTable(w io.Writer, header []string, rows [][]string) error {
	return TableStyle{}.Write(w, header, rows)
}

// TextTable writes a plain ASCII table with no width limit: TableStyle{Text: true}.Write.
func TextTable(w io.Writer, header []string, rows [][]string) error {
	return TableStyle{Text: true}.Write(w, header, rows)
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
