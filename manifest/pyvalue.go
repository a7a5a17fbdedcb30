package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// contextKeys are the fields a completion line copies from its dispatched line.
var contextKeys = []string{"file", "role", "phase", "task", "input_chars", "model_tier"}

// optionalContextKeys are copied too, but only when the dispatched line has them:
// older Crucible versions write no model_profile.
var optionalContextKeys = []string{KeyModelProfile}

// CopyContext returns the fields that a completion line copies from the dispatched
// line it completes (file, role, phase, task, input_chars, model_tier, and
// model_profile when the line has one), as Crucible's
// script copies them: each value re-encoded the way Python's json.dumps writes what
// json.loads read, null when the key is missing. Put the result in Entry.Extra:
// AppendJSON writes these values in place of the typed fields.
func CopyContext(dispatchedLine []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(dispatchedLine))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("the dispatched line is not a JSON object: %w", err)
	}
	out := make(map[string]json.RawMessage, len(contextKeys))
	for _, k := range contextKeys {
		raw, ok := top[k]
		if !ok {
			out[k] = json.RawMessage("null")
			continue
		}
		v, err := appendPyJSON(nil, raw)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		out[k] = v
	}
	for _, k := range optionalContextKeys {
		if raw, ok := top[k]; ok {
			v, err := appendPyJSON(nil, raw)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			out[k] = v
		}
	}
	return out, nil
}

// PyText renders a JSON value as Python's str() prints what json.loads read: a
// string as its text, null as None, true and false as True and False, numbers as
// Python writes them, anything else as its JSON text.
func PyText(raw json.RawMessage) string {
	switch s := string(bytes.TrimSpace(raw)); {
	case s == "" || s == "null":
		return "None"
	case s == "true":
		return "True"
	case s == "false":
		return "False"
	case strings.HasPrefix(s, `"`):
		var text string
		if json.Unmarshal(raw, &text) == nil {
			return text
		}
	}
	b, err := appendPyJSON(nil, raw)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// appendPyJSON appends the JSON value raw re-encoded as Python's json.dumps(...,
// separators=(",", ":"), ensure_ascii=False) writes it after json.loads: compact,
// strings escaped like appendString, integers canonical, floats as Python's repr,
// duplicate object keys collapsed to the last value at the first key's place.
func appendPyJSON(b []byte, raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	b, err := appendPyValue(b, dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data after the value")
	}
	return b, nil
}

func appendPyValue(b []byte, dec *json.Decoder, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case string:
		return appendString(b, t), nil
	case json.Number:
		return appendPyNumber(b, string(t))
	case json.Delim:
		if t == '[' {
			return appendPyArray(b, dec, depth)
		}
		return appendPyObject(b, dec, depth)
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

func appendPyArray(b []byte, dec *json.Decoder, depth int) ([]byte, error) {
	b = append(b, '[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendPyValue(b, dec, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // ]
		return nil, err
	}
	return append(b, ']'), nil
}

func appendPyObject(b []byte, dec *json.Decoder, depth int) ([]byte, error) {
	var keys []string
	values := map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := appendPyValue(nil, dec, depth+1)
		if err != nil {
			return nil, err
		}
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = v
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, err
	}
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, values[k]...)
	}
	return append(b, '}'), nil
}

// appendPyNumber writes a JSON number as Python does after reading it: an integer
// in canonical decimal, anything else as the repr of a float.
func appendPyNumber(b []byte, num string) ([]byte, error) {
	if !strings.ContainsAny(num, ".eE") {
		if num == "-0" {
			return append(b, '0'), nil
		}
		return append(b, num...), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(f, 0) {
		// Python would write Infinity, which is not JSON; the line stays JSON.
		return nil, fmt.Errorf("the number %s is too large for a float", clip(num, 40))
	}
	return append(b, pyFloatRepr(f)...), nil
}

// pyFloatRepr formats f as Python's repr(float) does: the shortest digits that read
// back to f, in positional notation (with ".0" when whole) while the decimal
// exponent is in [-4, 16), otherwise as d.ddde±XX.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
