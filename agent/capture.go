package agent

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxOutputBytes is how much of an agent's stdout a Response keeps; the rest is read,
// counted and dropped.
const MaxOutputBytes = 1 << 20

// MaxSummaryRunes bounds a Response's Summary.
const MaxSummaryRunes = 240

// NoOutputSummary is the summary of a response whose stdout was empty or blank.
const NoOutputSummary = "(no output)"

// maxScanLine is how much of one stdout line is looked at for the summary and verdict.
const maxScanLine = 4096

// capture is an io.Writer for an agent's stdout: it keeps the first max bytes,
// counts every rune, and picks the summary and verdict lines as they stream by, so a
// huge output costs at most max bytes of memory.
type capture struct {
	max       int
	kept      []byte
	seen      int64
	chars     int
	truncated bool

	line     []byte
	first    string
	summary  string
	verdict  string
	finished bool
}

func newCapture(max int) *capture { return &capture{max: max} }

// Write never fails, so the agent is never blocked or killed by a full buffer.
func (c *capture) Write(p []byte) (int, error) {
	for _, b := range p {
		if b&0xC0 != 0x80 { // a rune starts at every byte that is not a continuation byte
			c.chars++
		}
	}
	if room := c.max - len(c.kept); room > 0 {
		c.kept = append(c.kept, p[:min(room, len(p))]...)
	}
	c.seen += int64(len(p))
	c.truncated = c.seen > int64(c.max)
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		seg := rest
		if i >= 0 {
			seg = rest[:i]
		}
		if room := maxScanLine - len(c.line); room > 0 {
			c.line = append(c.line, seg[:min(room, len(seg))]...)
		}
		if i < 0 {
			break
		}
		c.endLine()
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (c *capture) endLine() {
	text := strings.TrimSpace(string(c.line))
	c.line = c.line[:0]
	if text == "" {
		return
	}
	if c.first == "" {
		c.first = text
	}
	if rest, ok := cutPrefixFold(text, "SUMMARY:"); ok && strings.TrimSpace(rest) != "" {
		c.summary = strings.TrimSpace(rest)
	}
	word := text
	if rest, ok := cutPrefixFold(text, "VERDICT:"); ok {
		word = ""
		if f := strings.Fields(rest); len(f) > 0 {
			word = strings.ToUpper(strings.Trim(f[0], "*`.,:;!"))
		}
	}
	switch word {
	case "PASS", "FAIL", "BLOCKED":
		c.verdict = word
	}
}

// finish ends the last line and trims the kept output to a whole rune.
func (c *capture) finish() {
	if c.finished {
		return
	}
	c.finished = true
	if len(c.line) > 0 {
		c.endLine()
	}
	if c.truncated {
		c.kept = trimToRune(c.kept)
	}
}

// fill copies what was captured into r.
func (c *capture) fill(r *Response) {
	c.finish()
	r.Output, r.OutputChars, r.Truncated, r.Verdict = c.kept, c.chars, c.truncated, c.verdict
	s := c.summary
	if s == "" {
		s = c.first
	}
	if s == "" {
		s = NoOutputSummary
	}
	r.Summary = clipSummary(s)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// trimToRune drops a rune cut in half at the end of b.
func trimToRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// clipSummary makes s one printable line of at most MaxSummaryRunes runes.
func clipSummary(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= MaxSummaryRunes {
		return s
	}
	runes := []rune(s)
	return strings.TrimSpace(string(runes[:MaxSummaryRunes-1])) + "…"
}
