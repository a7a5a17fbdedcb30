package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// MaxSeq bounds the seq numbers the reader accepts, so that "one more than every seq
// ever used" can never overflow and a damaged number cannot poison the sequence.
const maxSeqValue = 1_000_000_000

// maxDepth bounds the nesting of unknown values, so hostile input cannot exhaust the stack.
const maxDepth = 64

// ParseLine parses one manifest line (a compact or pretty JSON object on one line) into
// an Entry. It never panics; the error says what is wrong in user words, without the
// line number, which the caller adds.
func ParseLine(line []byte) (Entry, error) {
	var p lineParser
	return p.parse(line)
}

// lineParser parses manifest lines; it keeps a small cache of recent values so that
// the repetitive strings of a large manifest (roles, tiers, phases, the file name of
// a seq's two lines) are allocated once.
type lineParser struct {
	b      []byte
	i      int
	recent [256]string

	ints   []int
	floats []float64
	strs   []string
}

// valueKind is the JSON type of a scanned value.
type valueKind int

const (
	kindString valueKind = iota
	kindNumber
	kindNull
	kindBool
	kindObject
	kindArray
)

func (k valueKind) String() string {
	return [...]string{"a string", "a number", "null", "a boolean", "an object", "an array"}[k]
}

// syntaxError is a JSON syntax problem at a byte offset of the line.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("not valid JSON at byte %d: %s", e.off+1, e.msg)
}

func (p *lineParser) fail(msg string) error { return &syntaxError{msg: msg, off: p.i} }

func (p *lineParser) parse(line []byte) (Entry, error) {
	p.b, p.i = line, 0
	var e Entry
	p.ws()
	if p.i >= len(p.b) {
		return e, fmt.Errorf("empty line")
	}
	if p.b[p.i] != '{' {
		if bytes.IndexByte(p.b, 0) >= 0 {
			return e, fmt.Errorf("binary data (NUL bytes), not a JSON line")
		}
		return e, fmt.Errorf("not a JSON object (starts with %q)", clip(string(p.b[p.i:min(p.i+12, len(p.b))]), 12))
	}
	p.i++
	seen := fieldSet(0)
	first := true
	for {
		p.ws()
		if p.i >= len(p.b) {
			return e, p.fail("the object is not closed (truncated line?)")
		}
		if p.b[p.i] == '}' && first {
			p.i++
			break
		}
		first = false
		key, err := p.key()
		if err != nil {
			return e, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return e, p.fail("want ':' after a key")
		}
		p.i++
		p.ws()
		start := p.i
		kind, err := p.value(0)
		if err != nil {
			return e, err
		}
		if err := p.assign(&e, &seen, key, kind, p.b[start:p.i]); err != nil {
			return e, err
		}
		p.ws()
		if p.i >= len(p.b) {
			return e, p.fail("the object is not closed (truncated line?)")
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			break
		}
		return e, p.fail("want ',' or '}'")
	}
	p.ws()
	if p.i != len(p.b) {
		return e, p.fail("data after the end of the object")
	}
	if !seen.has(fSeq) {
		return e, fmt.Errorf("no \"seq\" field")
	}
	if !seen.has(fStatus) || e.Status == "" {
		return e, fmt.Errorf("seq %d: no \"status\" field", e.Seq)
	}
	return e, nil
}

type fieldSet uint8

const (
	fSeq fieldSet = 1 << iota
	fStatus
)

func (s fieldSet) has(f fieldSet) bool { return s&f != 0 }

func (p *lineParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// key reads an object key. Keys with escapes are decoded by encoding/json.
func (p *lineParser) key() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", p.fail("want a quoted key")
	}
	start := p.i
	plain, err := p.str()
	if err != nil {
		return "", err
	}
	raw := p.b[start:p.i]
	if plain {
		if k, ok := knownKey(raw[1 : len(raw)-1]); ok {
			return k, nil
		}
	}
	return p.decodeString(raw, plain, false), nil
}

// knownKeys are the manifest keys, returned without allocating.
var knownKeys = []string{"seq", "file", "role", "phase", "task", "status", "duration_s", "summary",
	"input_chars", "output_chars", "model_tier", "tool_calls", "replay_of", "replay_session", "mutation"}

func knownKey(b []byte) (string, bool) {
	for _, k := range knownKeys {
		if string(b) == k {
			return k, true
		}
	}
	return "", false
}

// str scans a JSON string starting at the opening quote and reports whether it is
// plain ASCII without escapes (so it can be used without decoding).
func (p *lineParser) str() (plain bool, err error) {
	p.i++ // opening quote
	// Fast path: up to the next quote, nothing but printable ASCII.
	if j := bytes.IndexByte(p.b[p.i:], '"'); j >= 0 {
		seg := p.b[p.i : p.i+j]
		clean := true
		for _, c := range seg {
			if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
				clean = false
				break
			}
		}
		if clean {
			p.i += j + 1
			return true, nil
		}
	}
	plain = true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return plain, nil
		case c == '\\':
			plain = false
			p.i++
			if p.i >= len(p.b) {
				return false, p.fail("unfinished escape")
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+5 > len(p.b) {
					return false, p.fail("unfinished \\u escape")
				}
				for _, h := range p.b[p.i+1 : p.i+5] {
					if !isHex(h) {
						return false, p.fail("bad \\u escape")
					}
				}
				p.i += 5
			default:
				return false, p.fail("bad escape")
			}
		case c < 0x20:
			return false, p.fail("control character in a string")
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			p.i++
		}
	}
	return false, p.fail("the string is not closed (truncated line?)")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// decodeString turns a scanned, quoted JSON string into a Go string.
func (p *lineParser) decodeString(quoted []byte, plain, intern bool) string {
	if plain {
		raw := quoted[1 : len(quoted)-1]
		if intern && len(raw) > 0 {
			// A direct-mapped cache of recent values: roles, tiers, phases and the file
			// name of a seq's earlier line are found without hashing the whole string.
			h := uint32(len(raw))
			for _, c := range raw[:min(len(raw), 8)] {
				h = h*16777619 ^ uint32(c)
			}
			h ^= uint32(raw[len(raw)-1]) << 3
			slot := &p.recent[h%uint32(len(p.recent))]
			if *slot == string(raw) {
				return *slot
			}
			*slot = string(raw)
			return *slot
		}
		return string(raw)
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		// str already validated the syntax; this cannot happen, but never panic.
		return string(quoted[1 : len(quoted)-1])
	}
	return s
}

// value scans one JSON value of any kind and returns its kind.
func (p *lineParser) value(depth int) (valueKind, error) {
	if p.i >= len(p.b) {
		return 0, p.fail("want a value (truncated line?)")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, err := p.str()
		return kindString, err
	case c == '-' || ('0' <= c && c <= '9'):
		return kindNumber, p.number()
	case c == 'n':
		return kindNull, p.literal("null")
	case c == 't':
		return kindBool, p.literal("true")
	case c == 'f':
		return kindBool, p.literal("false")
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, p.fail("nested too deeply")
		}
		if c == '{' {
			return kindObject, p.container(depth, '}', true)
		}
		return kindArray, p.container(depth, ']', false)
	}
	return 0, p.fail(fmt.Sprintf("unexpected %q", p.b[p.i]))
}

func (p *lineParser) literal(word string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return p.fail("bad literal")
	}
	p.i += len(word)
	return nil
}

func (p *lineParser) container(depth int, end byte, object bool) error {
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == end {
		p.i++
		return nil
	}
	for {
		p.ws()
		if object {
			if _, err := p.key(); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return p.fail("want ':' after a key")
			}
			p.i++
			p.ws()
		}
		if _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail("unclosed value (truncated line?)")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case end:
			p.i++
			return nil
		default:
			return p.fail("want ',' or a closing bracket")
		}
	}
}

func (p *lineParser) number() error {
	b, i := p.b, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return p.fail("bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return p.fail("bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return p.fail("bad number")
		}
	}
	p.i = i
	return nil
}

// assign stores one scanned value into the entry by key.
func (p *lineParser) assign(e *Entry, seen *fieldSet, key string, kind valueKind, raw []byte) error {
	switch key {
	case "seq":
		n, null, err := intValue(kind, raw)
		if err != nil || null {
			return fmt.Errorf("\"seq\" must be a whole number, got %s", describe(kind, raw))
		}
		if n < 0 || n > maxSeqValue {
			return fmt.Errorf("\"seq\" %d is out of range", n)
		}
		e.Seq = n
		*seen |= fSeq
	case "status":
		s, null, err := p.textOf(kind, raw, true)
		if err != nil || null {
			return fmt.Errorf("\"status\" must be a string, got %s", describe(kind, raw))
		}
		st, ok := parseStatus(s)
		if !ok {
			return fmt.Errorf("unknown status %q (want dispatched, completed, failed, error or skipped)", clip(s, 40))
		}
		e.Status = st
		*seen |= fStatus
	case "file", "role":
		s, _, err := p.textOf(kind, raw, true)
		if err != nil {
			return fmt.Errorf("%q: %v", key, err)
		}
		if key == "file" {
			e.File = s
		} else {
			e.Role = s
		}
	case "phase", "summary", "model_tier", "replay_session", "mutation":
		s, err := p.textValue(kind, raw, key == "phase" || key == "model_tier")
		if err != nil {
			return fmt.Errorf("%q: %v", key, err)
		}
		if s != nil && *s == "" && key == "phase" {
			s = nil
		}
		*p.textField(e, key) = s
	case "task":
		if kind == kindString {
			s := p.decodeString(raw, false, false)
			if s == "" || s == "null" || s == "-" {
				e.Task = nil
				return nil
			}
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("\"task\" must be a whole number or null, got %q", clip(s, 40))
			}
			e.Task = p.newInt(n)
			return nil
		}
		n, err := p.intPtr(kind, raw)
		if err != nil {
			return fmt.Errorf("\"task\" must be a whole number or null, got %s", describe(kind, raw))
		}
		e.Task = n
	case "input_chars", "output_chars", "tool_calls", "replay_of":
		n, err := p.intPtr(kind, raw)
		if err != nil {
			return fmt.Errorf("%q must be a whole number or null, got %s", key, describe(kind, raw))
		}
		*intField(e, key) = n
	case "duration_s":
		switch kind {
		case kindNull:
			e.DurationS = nil
		case kindNumber:
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || math.IsInf(f, 0) {
				return fmt.Errorf("\"duration_s\" %s is out of range", clip(string(raw), 40))
			}
			e.DurationS = p.newFloat(f)
		default:
			return fmt.Errorf("\"duration_s\" must be a number or null, got %s", describe(kind, raw))
		}
	default:
		if e.Extra == nil {
			e.Extra = make(map[string]json.RawMessage)
		}
		e.Extra[key] = append(json.RawMessage(nil), raw...)
	}
	return nil
}

func (p *lineParser) textField(e *Entry, key string) **string {
	switch key {
	case "phase":
		return &e.Phase
	case "summary":
		return &e.Summary
	case "model_tier":
		return &e.ModelTier
	case "replay_session":
		return &e.ReplaySession
	}
	return &e.Mutation
}

func intField(e *Entry, key string) **int {
	switch key {
	case "input_chars":
		return &e.InputChars
	case "output_chars":
		return &e.OutputChars
	case "tool_calls":
		return &e.ToolCalls
	}
	return &e.ReplayOf
}

// textOf renders a string, number or boolean as text; null is reported as such.
// Damaged manifests carry numbers where strings belong (phase 3 instead of "3").
func (p *lineParser) textOf(kind valueKind, raw []byte, intern bool) (s string, null bool, err error) {
	switch kind {
	case kindNull:
		return "", true, nil
	case kindString:
		return p.decodeString(raw, isPlain(raw), intern), false, nil
	case kindNumber, kindBool:
		return string(raw), false, nil
	}
	return "", false, fmt.Errorf("want a string, got %s", kind)
}

// textValue is textOf as a pointer (nil for null).
func (p *lineParser) textValue(kind valueKind, raw []byte, intern bool) (*string, error) {
	s, null, err := p.textOf(kind, raw, intern)
	if err != nil || null {
		return nil, err
	}
	return p.newString(s), nil
}

// isPlain reports whether a quoted string needs no decoding.
func isPlain(quoted []byte) bool {
	for _, c := range quoted[1 : len(quoted)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// intValue reads a whole number (an integral float such as 12.0 is accepted); null
// is reported as such.
func intValue(kind valueKind, raw []byte) (n int, null bool, err error) {
	const limit = 1 << 40
	switch kind {
	case kindNull:
		return 0, true, nil
	case kindNumber:
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil && v >= -limit && v <= limit {
			return int(v), false, nil
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > limit {
			return 0, false, fmt.Errorf("not a whole number")
		}
		return int(f), false, nil
	}
	return 0, false, fmt.Errorf("not a number")
}

// newInt, newFloat and newString hand out pointers into small slabs, so a large
// manifest costs a few allocations per hundred lines instead of several per line.
func (p *lineParser) newInt(v int) *int {
	if len(p.ints) == cap(p.ints) {
		p.ints = make([]int, 0, 256)
	}
	p.ints = append(p.ints, v)
	return &p.ints[len(p.ints)-1]
}

func (p *lineParser) newFloat(v float64) *float64 {
	if len(p.floats) == cap(p.floats) {
		p.floats = make([]float64, 0, 128)
	}
	p.floats = append(p.floats, v)
	return &p.floats[len(p.floats)-1]
}

func (p *lineParser) newString(v string) *string {
	if len(p.strs) == cap(p.strs) {
		p.strs = make([]string, 0, 256)
	}
	p.strs = append(p.strs, v)
	return &p.strs[len(p.strs)-1]
}

// intPtr is intValue as a pointer (nil for null).
func (p *lineParser) intPtr(kind valueKind, raw []byte) (*int, error) {
	n, null, err := intValue(kind, raw)
	if err != nil || null {
		return nil, err
	}
	return p.newInt(n), nil
}

func describe(kind valueKind, raw []byte) string {
	if kind == kindObject || kind == kindArray {
		return kind.String()
	}
	return kind.String() + " " + clip(string(raw), 40)
}

func parseStatus(s string) (Status, bool) {
	switch Status(s) {
	case StatusDispatched:
		return StatusDispatched, true
	case StatusCompleted:
		return StatusCompleted, true
	case StatusFailed:
		return StatusFailed, true
	case StatusError:
		return StatusError, true
	case StatusSkipped:
		return StatusSkipped, true
	}
	return "", false
}

// scrapeSeq finds a readable `"seq": N` in a damaged line (a torn tail, a corrupt
// line); ok is false when there is none.
func scrapeSeq(line []byte) (int, bool) {
	key := []byte(`"seq"`)
	for off := 0; ; {
		j := bytes.Index(line[off:], key)
		if j < 0 {
			return 0, false
		}
		i := off + j + len(key)
		off = i
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) || line[i] != ':' {
			continue
		}
		i++
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		d := i
		for i < len(line) && '0' <= line[i] && line[i] <= '9' && i-d < 10 {
			i++
		}
		if i == d {
			continue
		}
		n, err := strconv.Atoi(string(line[d:i]))
		if err != nil || n > maxSeqValue {
			continue
		}
		return n, true
	}
}
