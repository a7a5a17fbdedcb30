package pipesim

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// pipeBuf is POSIX PIPE_BUF: upstream keeps every manifest line, newline
// included, within it so one write() append stays atomic.
const pipeBuf = 4096

// field is one key of a manifest entry in upstream's key order; Value is nil
// (JSON null), an int, or a string.
type field struct {
	Key   string
	Value any
}

// pyDumps serialises fields as Python's json.dumps(entry, separators=(",", ":"),
// ensure_ascii=False) does: compact, keys in insertion order, non-ASCII kept.
func pyDumps(fields []field) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		pyString(&b, f.Key)
		b.WriteByte(':')
		switch v := f.Value.(type) {
		case nil:
			b.WriteString("null")
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			pyString(&b, v)
		default:
			panic("pipesim: unsupported manifest value")
		}
	}
	b.WriteByte('}')
	return b.String()
}

// pyString writes s as Python's JSON encoder does with ensure_ascii=False: only
// the quote, the backslash and control characters below 0x20 are escaped.
func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// fitLine is upstream's _append: when the line (plus newline) exceeds PIPE_BUF
// and the entry has a summary, the summary is cut to the longest prefix (in code
// points) that fits, with "..." appended when cut.
func fitLine(fields []field) string {
	line := pyDumps(fields)
	if len(line)+1 <= pipeBuf {
		return line
	}
	si := -1
	for i, f := range fields {
		if f.Key == "summary" {
			si = i
		}
	}
	if si < 0 {
		return line
	}
	summary, ok := fields[si].Value.(string)
	if !ok {
		return line
	}
	runes := []rune(summary)
	try := func(n int) string {
		s := string(runes[:n])
		if n < len(runes) {
			s += "..."
		}
		fields[si].Value = s
		return pyDumps(fields)
	}
	lo, hi, best := 0, len(runes), 0
	for lo <= hi {
		mid := (lo + hi) / 2
		if len(try(mid))+1 <= pipeBuf {
			best = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return try(best)
}

// pyLen is Python's len() of a text file's contents: code points.
func pyLen(s string) int { return utf8.RuneCountInString(s) }
