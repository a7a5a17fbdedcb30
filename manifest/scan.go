package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// lineParser parses manifest lines; the text fields of a line are gathered in text,
// so that a line costs one string however many fields it has (see rec).
type lineParser struct {
	b     []byte
	i     int
	text  []byte
	extra map[string]json.RawMessage
	plain bool // the last string value scanned needs no decoding
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
	return p.decodeString(raw, plain), nil
}

// knownKey returns the manifest key b names, without allocating; ok is false for a
// key that is not one of them.
func knownKey(b []byte) (k string, ok bool) {
	switch string(b) {
	case "seq":
		return "seq", true
	case "file":
		return "file", true
	case "role":
		return "role", true
	case "phase":
		return "phase", true
	case "task":
		return "task", true
	case "status":
		return "status", true
	case "duration_s":
		return "duration_s", true
	case "summary":
		return "summary", true
	case "input_chars":
		return "input_chars", true
	case "output_chars":
		return "output_chars", true
	case "model_tier":
		return "model_tier", true
	case "tool_calls":
		return "tool_calls", true
	case "replay_of":
		return "replay_of", true
	case "replay_session":
		return "replay_session", true
	case "mutation":
		return "mutation", true
	}
	return "", false
}

// strStop marks the bytes that end the fast scan of a string: the closing quote, a
// backslash, control characters and non-ASCII bytes.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str scans a JSON string starting at the opening quote and reports whether it is
// plain ASCII without escapes (so it can be used without decoding).
func (p *lineParser) str() (plain bool, err error) {
	p.i++ // opening quote
	// Fast path: printable ASCII up to the closing quote (one table look-up a byte;
	// manifest strings are short, too short for bytes.IndexByte to pay).
	b, i := p.b, p.i
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	p.i = i
	if i < len(b) && b[i] == '"' {
		p.i++
		return true, nil
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
func (p *lineParser) decodeString(quoted []byte, plain bool) string {
	if plain {
		return string(quoted[1 : len(quoted)-1])
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
		plain, err := p.str()
		p.plain = plain
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
