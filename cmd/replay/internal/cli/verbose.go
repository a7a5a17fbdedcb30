package cli

import (
	"fmt"
)

// Verbosef writes one detail line to stderr when --verbose was given, through the
// printer (which escapes values from a run's files and stays silent under --quiet).
func (b *cmdBase) Verbosef(format string, args ...any) {
	b.Printer().Verbosef("verbose: %s", fmt.Sprintf(format, args...))
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
