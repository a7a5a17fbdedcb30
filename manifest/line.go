package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// SeqLimit is the highest seq replay accepts. A line with a larger seq is treated as
// corrupt (skipped with a warning), and a larger <N>- file prefix is ignored, so one
// damaged or hostile number can neither make plan enumerate a hundred million seqs
// nor push the next seq out of reach. Such a seq does not count for the next seq: a
// pipeline would need ten million dispatches to climb to it, so it is never handed
// out again in practice.
const SeqLimit = 10_000_000

// maxSeqValue is SeqLimit under its older internal name.
const maxSeqValue = SeqLimit

// MaxSeq is the largest seq a manifest line may carry.
const MaxSeq = maxSeqValue

// maxDepth bounds the nesting of unknown values, so hostile input cannot exhaust the stack.
const maxDepth = 64

// ParseLine parses one manifest line (a compact or pretty JSON object on one line) into
// an Entry. It never panics; the error says what is wrong in user words, without the
// line number, which the caller adds.
func ParseLine(line []byte) (Entry, error) {
	var p lineParser
	return p.parse(line)
}

// parse is ParseLine with p's buffers.
func (p *lineParser) parse(line []byte) (Entry, error) {
	var r rec
	err := p.parseRec(line, &r)
	var e Entry
	r.entry(&e, string(p.text), p.extra, entrySlabs())
	return e, err
}

// parseRec parses one line into r (see ParseLine); the line's text fields are left in
// p.text, its unknown keys in p.extra.
func (p *lineParser) parseRec(line []byte, r *rec) error {
	p.b, p.i, p.text, p.extra = line, 0, p.text[:0], nil
	p.ws()
	if p.i >= len(p.b) {
		return fmt.Errorf("empty line")
	}
	if p.b[p.i] != '{' {
		if bytes.IndexByte(p.b, 0) >= 0 {
			return fmt.Errorf("binary data (NUL bytes), not a JSON line")
		}
		return fmt.Errorf("not a JSON object (starts with %q)", clip(string(p.b[p.i:min(p.i+12, len(p.b))]), 12))
	}
	p.i++
	seen := fieldSet(0)
	first := true
	for {
		p.ws()
		if p.i >= len(p.b) {
			return p.fail("the object is not closed (truncated line?)")
		}
		if p.b[p.i] == '}' && first {
			p.i++
			break
		}
		first = false
		key, err := p.key()
		if err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail("want ':' after a key")
		}
		p.i++
		p.ws()
		start := p.i
		kind, err := p.value(0)
		if err != nil {
			return err
		}
		if err := p.assign(r, &seen, key, kind, p.b[start:p.i]); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail("the object is not closed (truncated line?)")
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			break
		}
		return p.fail("want ',' or '}'")
	}
	p.ws()
	if p.i != len(p.b) {
		return p.fail("data after the end of the object")
	}
	if !seen.has(fSeq) {
		return fmt.Errorf("no \"seq\" field")
	}
	if !seen.has(fStatus) || r.status == 0 {
		return fmt.Errorf("seq %d: no \"status\" field", r.seq)
	}
	return nil
}

type fieldSet uint8

const (
	fSeq fieldSet = 1 << iota
	fStatus
)

func (s fieldSet) has(f fieldSet) bool { return s&f != 0 }

// assign stores one scanned value into the record by key.
func (p *lineParser) assign(r *rec, seen *fieldSet, key string, kind valueKind, raw []byte) error {
	switch key {
	case "seq":
		n, null, err := intValue(kind, raw)
		if err != nil || null {
			return fmt.Errorf("\"seq\" must be a whole number, got %s", describe(kind, raw))
		}
		if n < 0 || n > maxSeqValue {
			return fmt.Errorf("\"seq\" %d is out of range (0 to %d)", n, SeqLimit)
		}
		r.seq = int32(n)
		*seen |= fSeq
	case "status":
		if kind != kindString && kind != kindNumber && kind != kindBool {
			return fmt.Errorf("\"status\" must be a string, got %s", describe(kind, raw))
		}
		st, ok := p.statusCode(kind, raw)
		if !ok {
			s, _, _ := p.textOf(kind, raw)
			return fmt.Errorf("unknown status %q (want %s)", clip(s, 40), statusList)
		}
		r.status = st
		*seen |= fStatus
	case "file", "role":
		ref, _, err := p.textRef(kind, raw)
		if err != nil {
			return fmt.Errorf("%q: %v", key, err)
		}
		if key == "file" {
			r.refs[tFile] = ref
		} else {
			r.refs[tRole] = ref
		}
	case "phase", "summary", "model_tier", "replay_session", "mutation":
		ref, null, err := p.textRef(kind, raw)
		if err != nil {
			return fmt.Errorf("%q: %v", key, err)
		}
		t, bit := textField(key)
		r.refs[t] = ref
		r.has &^= bit
		if !null && (ref.n > 0 || key != "phase") {
			r.has |= bit
		}
	case "task":
		return p.assignTask(r, kind, raw)
	case "input_chars", "output_chars", "tool_calls", "replay_of":
		n, null, err := intValue(kind, raw)
		if err != nil {
			return fmt.Errorf("%q must be a whole number or null, got %s", key, describe(kind, raw))
		}
		dst, bit := intField(r, key)
		*dst = n
		r.has &^= bit
		if !null {
			r.has |= bit
		}
	case "duration_s":
		return p.assignDuration(r, kind, raw)
	default:
		if p.extra == nil {
			p.extra = make(map[string]json.RawMessage)
		}
		p.extra[key] = append(json.RawMessage(nil), raw...)
	}
	return nil
}

// assignTask stores "task": a whole number, null, or a string holding one (an empty
// string, "null" and "-" are null).
func (p *lineParser) assignTask(r *rec, kind valueKind, raw []byte) error {
	r.has &^= hTask
	if kind == kindString {
		s := p.decodeString(raw, false)
		if s == "" || s == "null" || s == "-" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("\"task\" must be a whole number or null, got %q", clip(s, 40))
		}
		r.task = n
		r.has |= hTask
		return nil
	}
	n, null, err := intValue(kind, raw)
	if err != nil {
		return fmt.Errorf("\"task\" must be a whole number or null, got %s", describe(kind, raw))
	}
	if !null {
		r.task = n
		r.has |= hTask
	}
	return nil
}

// assignDuration stores "duration_s": a finite number or null.
func (p *lineParser) assignDuration(r *rec, kind valueKind, raw []byte) error {
	switch kind {
	case kindNull:
		r.has &^= hDuration
	case kindNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("\"duration_s\" %s is out of range", clip(string(raw), 40))
		}
		r.duration = f
		r.has |= hDuration
	default:
		return fmt.Errorf("\"duration_s\" must be a number or null, got %s", describe(kind, raw))
	}
	return nil
}

// textField names the span and the null bit of a nullable text field.
func textField(key string) (int, uint16) {
	switch key {
	case "phase":
		return tPhase, hPhase
	case "summary":
		return tSummary, hSummary
	case "model_tier":
		return tTier, hTier
	case "replay_session":
		return tSession, hSession
	}
	return tMutation, hMutation
}

func intField(r *rec, key string) (*int, uint16) {
	switch key {
	case "input_chars":
		return &r.inputChars, hInput
	case "output_chars":
		return &r.outputChars, hOutput
	case "tool_calls":
		return &r.toolCalls, hToolCalls
	}
	return &r.replayOf, hReplayOf
}

// textOf renders a string, number or boolean as text; null is reported as such.
// Damaged manifests carry numbers where strings belong (phase 3 instead of "3").
func (p *lineParser) textOf(kind valueKind, raw []byte) (s string, null bool, err error) {
	switch kind {
	case kindNull:
		return "", true, nil
	case kindString:
		return p.decodeString(raw, isPlain(raw)), false, nil
	case kindNumber, kindBool:
		return string(raw), false, nil
	}
	return "", false, fmt.Errorf("want a string, got %s", kind)
}

// textRef is textOf appending the text to the line's text and returning its span.
func (p *lineParser) textRef(kind valueKind, raw []byte) (ref textRef, null bool, err error) {
	off := len(p.text)
	switch kind {
	case kindNull:
		return textRef{}, true, nil
	case kindString:
		if p.plain {
			p.text = append(p.text, raw[1:len(raw)-1]...)
		} else {
			p.text = append(p.text, p.decodeString(raw, false)...)
		}
	case kindNumber, kindBool:
		p.text = append(p.text, raw...)
	default:
		return textRef{}, false, fmt.Errorf("want a string, got %s", kind)
	}
	return textRef{off: uint32(off), n: uint32(len(p.text) - off)}, false, nil
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
		if v, ok := smallInt(raw); ok {
			return v, false, nil
		}
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

// smallInt reads a JSON number made of digits only (no sign, fraction or exponent)
// of at most 12 digits, below intValue's limit; ok is false for anything else.
func smallInt(raw []byte) (n int, ok bool) {
	if len(raw) == 0 || len(raw) > 12 {
		return 0, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func describe(kind valueKind, raw []byte) string {
	if kind == kindObject || kind == kindArray {
		return kind.String()
	}
	return kind.String() + " " + clip(string(raw), 40)
}

// statusList names the known statuses for messages.
const statusList = "dispatched, completed, failed, error, skipped or replayed"

// statusCode is the rec.status of a status value; ok is false for an unknown one.
func (p *lineParser) statusCode(kind valueKind, raw []byte) (uint8, bool) {
	if kind != kindString {
		return 0, false
	}
	b := raw[1 : len(raw)-1]
	if !p.plain {
		b = []byte(p.decodeString(raw, false))
	}
	i := statusIndex(b)
	return i, i != 0
}

// parseStatus returns the known status named s; ok is false for an unknown one.
func parseStatus(s string) (Status, bool) {
	i := statusIndex([]byte(s))
	return statusNames[i], i != 0
}

// statusIndex is the index in statusNames of the status named name (the one list of
// the known statuses); 0 when it names none.
func statusIndex(name []byte) uint8 {
	for i, st := range statusNames[1:] {
		if string(name) == string(st) {
			return uint8(i + 1)
		}
	}
	return 0
}

// scrapeSeq finds a readable `"seq": N` in a damaged line (a torn tail, a corrupt
// line); ok is false when there is none.
func scrapeSeq(line []byte) (int, bool) {
	n, _, ok := seqDigits(line, []byte(`"seq"`), ':')
	return n, ok
}
