package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Safe returns s ready to reach a terminal or a markdown file: every control
// character (C0, DEL, C1, so ESC and the CSI that start terminal escape sequences,
// NUL, CR, newline and tab included), every bidirectional override or isolate
// (U+202E and its kin, which reorder what is shown) and every byte that is not UTF-8
// is written as a Go-style escape: \x1b, \r, \n, \t, \u202e, \xff. Everything else,
// backslashes included, is left as it is, so an ordinary value prints unchanged.
// Values from a run's files go through Safe (or SafeText) wherever they are printed.
func Safe(s string) string { return escape(s, false) }

// SafeText is Safe for text that may span lines: newlines and tabs are kept, every
// other control character and override is escaped.
func SafeText(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escaping, without allocating.
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(keepLines && (c == '\n' || c == '\t')) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune reports the non-ASCII runes that change what a terminal shows: the C1
// controls, the bidirectional marks, embeddings, overrides and isolates, and the
// line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
