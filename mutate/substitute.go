package mutate

import (
	"bytes"
	"errors"
	"strings"
)

// ErrTemplateNotLocated means a dispatch body neither starts with its template's
// text nor has a context heading, so the template part cannot be swapped safely.
var ErrTemplateNotLocated = errors.New("cannot locate the template's text in the dispatch body")

// ContextHeadings are the line prefixes that open the context an orchestrator
// injects after a template's text (Substitute's second strategy). A line matches
// when it starts with one and the prefix is followed by the end of the line or a
// character that is not a letter or digit.
var ContextHeadings = []string{"## Context"}

// SubstituteMode says how Substitute located the template part of a body.
type SubstituteMode int

// The ways Substitute locates the template part.
const (
	// ModeNone: not located (returned with ErrTemplateNotLocated).
	ModeNone SubstituteMode = iota
	// ModeTemplatePrefix: the body started with the original template's text.
	ModeTemplatePrefix
	// ModeContextHeading: everything before the first context heading was replaced.
	ModeContextHeading
)

const trailingSpace = " \t\r\n"

// Substitute returns body with its template part replaced by replText, keeping the
// injected context (see the package documentation for how the part is located), and
// the mode it used. origTemplate may be nil when the original template is unknown.
func Substitute(body, origTemplate, replText []byte) ([]byte, SubstituteMode, error) {
	repl := bytes.TrimRight(replText, trailingSpace)
	if orig := bytes.TrimRight(origTemplate, trailingSpace); len(orig) > 0 && bytes.HasPrefix(body, orig) {
		return join(repl, body[len(orig):]), ModeTemplatePrefix, nil
	}
	at, ok := contextHeading(body)
	if !ok {
		return nil, ModeNone, ErrTemplateNotLocated
	}
	part := body[:at]
	sep := part[len(bytes.TrimRight(part, trailingSpace)):]
	if len(sep) == 0 {
		sep = []byte("\n\n")
	}
	if len(repl) == 0 {
		sep = nil
	}
	return join(repl, sep, body[at:]), ModeContextHeading, nil
}

func join(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// contextHeading returns the offset of the first line that starts with one of
// ContextHeadings.
func contextHeading(body []byte) (int, bool) {
	for off := 0; off < len(body); {
		line := body[off:]
		next := len(body)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], off+i+1
		}
		if isHeading(string(line)) {
			return off, true
		}
		off = next
	}
	return 0, false
}

func isHeading(line string) bool {
	for _, h := range ContextHeadings {
		rest, ok := strings.CutPrefix(line, h)
		if !ok {
			continue
		}
		if rest == "" {
			return true
		}
		c := rest[0]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80) {
			return true
		}
	}
	return false
}
