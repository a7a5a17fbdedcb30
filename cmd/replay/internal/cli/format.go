package cli

import (
	"fmt"

	"github.com/replaytool/replay/report"
)

// tableFormat is the value of the global --format flag: "markdown", "text" or
// empty (choose by the terminal). Any other value is refused while the flags are
// parsed, so a typo is a usage error before anything runs.
type tableFormat string

// String returns the flag's value.
func (v *tableFormat) String() string { return string(*v) }

// Set accepts markdown or text.
func (v *tableFormat) Set(s string) error {
	switch s {
	case "markdown", "text":
		*v = tableFormat(s)
		return nil
	}
	return fmt.Errorf("%q is not a table format; use markdown or text", s)
}

// Type names the value in help.
func (v *tableFormat) Type() string { return "markdown|text" }

// TableStyle is how this command draws tables: markdown when stdout is not a
// terminal or --format markdown was given, an ASCII grid on a terminal or with
// --format text, no wider than the terminal (or COLUMNS, or report.DefaultWidth
// when neither is known).
func (b *cmdBase) TableStyle() report.TableStyle {
	text := b.Global.Format == "text" || (b.Global.Format == "" && b.IO.IsStdoutTTY())
	width := b.IO.TerminalWidth()
	if text && width <= 0 {
		width = report.DefaultWidth
	}
	return report.TableStyle{Text: text, Width: width}
}
