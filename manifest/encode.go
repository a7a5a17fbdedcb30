package manifest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxLineBytes is the largest manifest line, newline included, that one atomic append
// may write (SPEC §2).
const MaxLineBytes = 4096

// MarshalJSON encodes e as a manifest line (without the newline): compact JSON in the
// field order of SPEC §2, the replay fields when set, then unknown keys sorted.
func (e Entry) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil)
}

// UnmarshalJSON decodes one manifest line into e with the tolerant line parser.
func (e *Entry) UnmarshalJSON(data []byte) error {
	got, err := ParseLine(data)
	if err != nil {
		return err
	}
	*e = got
	return nil
}

// AppendJSON appends the manifest-line encoding of e to b. A context field (file,
// role, phase, task, input_chars, model_tier) that Extra holds, as CopyContext puts
// it there, is written from Extra instead of the typed field.
func (e Entry) AppendJSON(b []byte) ([]byte, error) {
	ok := false
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, `,"file":`...)
	if b, ok = e.appendCopied(b, "file"); !ok {
		b = appendString(b, e.File)
	}
	b = append(b, `,"role":`...)
	if b, ok = e.appendCopied(b, "role"); !ok {
		b = appendString(b, e.Role)
	}
	b = append(b, `,"phase":`...)
	if b, ok = e.appendCopied(b, "phase"); !ok {
		b = appendStringPtr(b, e.Phase)
	}
	b = append(b, `,"task":`...)
	if b, ok = e.appendCopied(b, "task"); !ok {
		b = appendIntPtr(b, e.Task)
	}
	b = append(b, `,"status":`...)
	b = appendString(b, string(e.Status))
	b = append(b, `,"duration_s":`...)
	if e.DurationS == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendFloat(b, *e.DurationS, 'f', -1, 64)
	}
	b = append(b, `,"summary":`...)
	b = appendStringPtr(b, e.Summary)
	b = append(b, `,"input_chars":`...)
	if b, ok = e.appendCopied(b, "input_chars"); !ok {
		b = appendIntPtr(b, e.InputChars)
	}
	b = append(b, `,"output_chars":`...)
	b = appendIntPtr(b, e.OutputChars)
	b = append(b, `,"model_tier":`...)
	if b, ok = e.appendCopied(b, "model_tier"); !ok {
		b = appendStringPtr(b, e.ModelTier)
	}
	for _, k := range labelKeys {
		if v, ok := e.Extra[k]; ok {
			if !json.Valid(v) {
				return nil, fmt.Errorf("seq %d: %s holds invalid JSON", e.Seq, k)
			}
			b = append(b, ',')
			b = appendString(b, k)
			b = append(b, ':')
			b = appendCompact(b, v)
		}
	}
	b = append(b, `,"tool_calls":`...)
	b = appendIntPtr(b, e.ToolCalls)
	if e.ReplayOf != nil {
		b = append(b, `,"replay_of":`...)
		b = appendIntPtr(b, e.ReplayOf)
	}
	if e.ReplaySession != nil {
		b = append(b, `,"replay_session":`...)
		b = appendStringPtr(b, e.ReplaySession)
	}
	if e.Mutation != nil {
		b = append(b, `,"mutation":`...)
		b = appendStringPtr(b, e.Mutation)
	}
	keys := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		if _, known := knownKey([]byte(k)); !known && !slices.Contains(labelKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := e.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("seq %d: unknown key %q holds invalid JSON", e.Seq, clip(k, 40))
		}
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		b = appendCompact(b, v)
	}
	return append(b, '}'), nil
}

// appendCopied appends Extra's value for a known context key; ok is false when
// Extra has none (or it is not valid JSON).
func (e Entry) appendCopied(b []byte, key string) ([]byte, bool) {
	v, ok := e.Extra[key]
	if !ok || !json.Valid(v) {
		return b, false
	}
	return appendCompact(b, v), true
}

// appendCompact appends valid JSON v without insignificant whitespace.
func appendCompact(b []byte, v []byte) []byte {
	inString, escaped := false, false
	for _, c := range v {
		if inString {
			b = append(b, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
		}
		b = append(b, c)
	}
	return b
}

func appendIntPtr(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way Python's
// json.dumps(..., ensure_ascii=False) writes it, so that lines are byte-identical to
// those of Crucible's own bookkeeping script: the short escapes \b \f \n \r \t \" \\,
// other C0 controls as \u00XX (lowercase hex), and everything else raw: DEL,
// U+2028/U+2029, non-ASCII text, '/' and HTML characters. A byte that is not valid
// UTF-8 becomes U+FFFD (Python would stop with an encoding error instead).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// validText returns s with every byte that is not valid UTF-8 replaced by U+FFFD,
// as appendString writes it.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// EncodeLine returns e as one manifest line with its newline, at most MaxLineBytes
// long. A summary that does not fit is cut to the longest prefix of whole characters
// that fits with "..." appended (the cut Crucible's script makes). When no cut of the
// summary makes the line fit, the longest model label (model_tier, model_profile or
// actual_model) is recorded as null instead, one at a time, as Crucible's newer script
// nulls oversized labels, and the full summary is tried again. When even that does not
// fit, it is an error (the script writes an over-long line anyway).
func EncodeLine(e Entry) ([]byte, error) {
	if _, ok := parseStatus(string(e.Status)); !ok {
		return nil, fmt.Errorf("seq %d: status %q is not %s", e.Seq, e.Status, statusList)
	}
	if e.Seq < 0 || e.Seq > maxSeqValue {
		return nil, fmt.Errorf("seq %d is out of range", e.Seq)
	}
	for {
		line, size, err := encodeFitting(e)
		if err != nil || line != nil {
			return line, err
		}
		if !e.nullLongestLabel() {
			return nil, fmt.Errorf("seq %d: the manifest line is %d bytes without its summary, more than the %d an atomic append allows; shorten the file, role or unknown fields", e.Seq, size, MaxLineBytes)
		}
	}
}

// nullLongestLabel sets the longest non-null model label of e to null (in a copy of
// Extra, never the caller's map); false when none is left.
func (e *Entry) nullLongestLabel() bool {
	best, bestLen := "", 0
	consider := func(k string, n int) {
		if n > bestLen {
			best, bestLen = k, n
		}
	}
	if v, ok := e.Extra["model_tier"]; ok {
		if string(v) != "null" {
			consider("model_tier", len(v))
		}
	} else if e.ModelTier != nil {
		consider("model_tier", len(*e.ModelTier)+2)
	}
	for _, k := range labelKeys {
		if v, ok := e.Extra[k]; ok && string(v) != "null" {
			consider(k, len(v))
		}
	}
	if best == "" {
		return false
	}
	extra := make(map[string]json.RawMessage, len(e.Extra)+1)
	for k, v := range e.Extra {
		extra[k] = v
	}
	if best == "model_tier" {
		e.ModelTier = nil
		if _, ok := extra["model_tier"]; ok {
			extra["model_tier"] = json.RawMessage("null")
		}
	} else {
		extra[best] = json.RawMessage("null")
	}
	e.Extra = extra
	return true
}

// encodeFitting encodes e, cutting its summary to fit MaxLineBytes. It returns a nil
// line, with the size of the shortest encoding, when no cut fits.
func encodeFitting(e Entry) (line []byte, size int, err error) {
	line, err = e.AppendJSON(make([]byte, 0, 512))
	if err != nil {
		return nil, 0, err
	}
	if len(line)+1 <= MaxLineBytes {
		return append(line, '\n'), 0, nil
	}
	if e.Summary != nil {
		// Cut the text that will be written: invalid bytes are already U+FFFD.
		summary := validText(*e.Summary)
		// Binary search the longest prefix (at a character boundary) that fits with "...".
		fits := func(cut int) ([]byte, bool) {
			s := summary[:cut] + "..."
			e.Summary = &s
			l, err := e.AppendJSON(nil)
			return l, err == nil && len(l)+1 <= MaxLineBytes
		}
		best, ok := fits(0)
		if ok {
			lo, hi := 0, len(summary) // fits(lo) holds; find the largest such lo
			for lo < hi {
				mid := (lo + hi + 1) / 2
				for mid > lo && !utf8.RuneStart(summary[mid]) {
					mid--
				}
				if mid == lo {
					// Only continuation bytes between lo and the old mid: step to the next rune.
					_, size := utf8.DecodeRuneInString(summary[lo:])
					if lo+size > hi {
						break
					}
					mid = lo + size
				}
				if l, ok := fits(mid); ok {
					lo, best = mid, l
				} else {
					hi = mid - 1
				}
			}
			return append(best, '\n'), 0, nil
		}
		line = best
	}
	return nil, len(line) + 1, nil
}
