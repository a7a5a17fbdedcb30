package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// MarkdownTable writes a GitHub-flavoured markdown table with a fixed, left-aligned
// layout so golden files are stable. Cells are escaped ("|" → "\|", newlines → " ",
// control characters and overrides as by Safe).
func MarkdownTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	return render(t, header, rows)
}

// TextTable writes a plain ASCII table for the terminal, with a fixed layout.
func TextTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	return render(t, header, rows)
}

func render(t *tablewriter.Table, header []string, rows [][]string) error {
	h := make([]any, len(header))
	for i, c := range header {
		h[i] = escapeCell(c)
	}
	t.Header(h...)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = escapeCell(c)
		}
		if err := t.Append(cells); err != nil {
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
