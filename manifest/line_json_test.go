package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceLine parses a manifest line the slow, obvious way: encoding/json reads
// the JSON (validity, strings and their escapes, keys, numbers, duplicates), then
// the manifest's documented tolerance rules (doc.go, "Reading a line") make an
// Entry of the top-level fields, in their order. ParseLine must agree with it on
// every line: accept exactly what it accepts, with the same fields.
func referenceLine(line []byte) (Entry, error) {
	var e Entry
	if !json.Valid(line) {
		return e, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return e, errors.New("not an object")
	}
	var sawSeq, sawStatus bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return e, err
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return e, err
		}
		if err := referenceField(&e, key, raw); err != nil {
			return e, err
		}
		sawSeq = sawSeq || key == "seq"
		sawStatus = sawStatus || key == "status"
	}
	if !sawSeq || !sawStatus {
		return e, errors.New("no seq or no status")
	}
	return e, nil
}

// referenceField applies one field's rule.
func referenceField(e *Entry, key string, raw json.RawMessage) error {
	kind := rawKind(raw)
	switch key {
	case "seq":
		n, null, err := referenceInt(raw)
		if err != nil || null || n < 0 || n > SeqLimit {
			return errors.New("bad seq")
		}
		e.Seq = n
	case "status":
		var s string
		if kind != '"' || json.Unmarshal(raw, &s) != nil {
			return errors.New("status not a string")
		}
		st, ok := parseStatus(s)
		if !ok {
			return errors.New("unknown status")
		}
		e.Status = st
	case "file", "role", "phase", "summary", "model_tier", "replay_session", "mutation":
		var text *string
		switch kind {
		case 'n':
		case '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			text = &s
		case '0', 't':
			s := string(raw)
			text = &s
		default:
			return errors.New("not text")
		}
		if key == "phase" && text != nil && *text == "" {
			text = nil // the documented rule: an empty phase is no phase
		}
		switch key {
		case "file":
			e.File = deref(text)
		case "role":
			e.Role = deref(text)
		case "phase":
			e.Phase = text
		case "summary":
			e.Summary = text
		case "model_tier":
			e.ModelTier = text
		case "replay_session":
			e.ReplaySession = text
		case "mutation":
			e.Mutation = text
		}
	case "task":
		if kind == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			if s == "" || s == "null" || s == "-" {
				e.Task = nil
				return nil
			}
			n, err := strconv.Atoi(s)
			if err != nil {
				return err
			}
			e.Task = &n
			return nil
		}
		n, null, err := referenceInt(raw)
		if err != nil {
			return err
		}
		e.Task = nil
		if !null {
			e.Task = &n
		}
	case "input_chars", "output_chars", "tool_calls", "replay_of":
		n, null, err := referenceInt(raw)
		if err != nil {
			return err
		}
		var p *int
		if !null {
			p = &n
		}
		switch key {
		case "input_chars":
			e.InputChars = p
		case "output_chars":
			e.OutputChars = p
		case "tool_calls":
			e.ToolCalls = p
		case "replay_of":
			e.ReplayOf = p
		}
	case "duration_s":
		switch kind {
		case 'n':
			e.DurationS = nil
		case '0':
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || math.IsInf(f, 0) {
				return errors.New("duration out of range")
			}
			e.DurationS = &f
		default:
			return errors.New("duration not a number")
		}
	default:
		if depth(raw) > maxDepth {
			return errors.New("nested too deep")
		}
		if e.Extra == nil {
			e.Extra = map[string]json.RawMessage{}
		}
		e.Extra[key] = raw
	}
	return nil
}

// referenceInt is a whole number (2.0 is 2) within ±2^40, or null.
func referenceInt(raw json.RawMessage) (n int, null bool, err error) {
	switch rawKind(raw) {
	case 'n':
		return 0, true, nil
	case '0':
		f, err := strconv.ParseFloat(string(raw), 64)
		if i, ierr := strconv.ParseInt(string(raw), 10, 64); ierr == nil {
			f, err = float64(i), nil
			if i >= -1<<40 && i <= 1<<40 {
				return int(i), false, nil
			}
		}
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<40 {
			return 0, false, errors.New("not a whole number")
		}
		return int(f), false, nil
	}
	return 0, false, errors.New("not a number")
}

// rawKind is the first byte of a JSON value's kind: '"', '0' (number), 't' (bool),
// 'n' (null), '{' or '['.
func rawKind(raw json.RawMessage) byte {
	switch c := raw[0]; {
	case c == '-' || (c >= '0' && c <= '9'):
		return '0'
	case c == 'f':
		return 't'
	default:
		return c
	}
}

// depth is how deeply arrays and objects nest in raw (0 for a scalar).
func depth(raw json.RawMessage) int {
	d, most, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// agreeWithEncodingJSON fails t when ParseLine and referenceLine disagree on line.
func agreeWithEncodingJSON(t *testing.T, line []byte) {
	t.Helper()
	want, wantErr := referenceLine(line)
	got, gotErr := ParseLine(line)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json and the manifest's rules say %v, ParseLine says %v", line, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	gotExtra, wantExtra := got.Extra, want.Extra
	got.Extra, want.Extra, got.Line, got.Inherited = nil, nil, 0, nil
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q:\nencoding/json: %s\nParseLine:     %s", line, show(want), show(got))
	}
	if len(gotExtra) != len(wantExtra) {
		t.Fatalf("%q: unknown keys %v, ParseLine kept %v", line, keys(wantExtra), keys(gotExtra))
	}
	for k, w := range wantExtra {
		var a, b any
		if json.Unmarshal(w, &a) != nil || json.Unmarshal(gotExtra[k], &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: unknown key %q is %s, ParseLine kept %s", line, k, w, gotExtra[k])
		}
	}
}

func show(e Entry) string {
	b, _ := json.Marshal(e)
	return string(b)
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// ParseLine reads a line as encoding/json does, under the manifest's own rules:
// the same lines accepted, the same fields read, over hand-picked edge cases, the
// fuzz seeds and the stored fuzz corpus.
func TestParseLineAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"seq":1,"status":"completed","x":{"a":[1,2.5e-3,"s",null,true,false,{}]},"y":"\ud83d\ude00"}`,
		`{"seq":1,"status":"completed","x":1,"x":2}`,
		`{"seq":1,"status":"completed","phase":""}`,
		`{"seq":1,"status":"completed","phase":"3","phase":null}`,
		`{"seq":1,"status":"completed","phase":3.50,"summary":true,"model_tier":-0}`,
		`{"s\u0065q":7,"st\u0061tus":"c\u006fmpleted","fil\u0065":"a\/b"}`,
		`{"seq":1,"status":"completed","summary":"\ud800 lone, \udc00 low, ` + "\xff\xfe bad utf-8" + `"}`,
		` {"seq" : 1 ,	"status":"failed"}` + "\r\n",
		`{"seq":1e1,"status":"skipped","task":"12","tool_calls":3.0}`,
		`{"seq":1,"status":"completed","task":"-"}`,
		`{"seq":1,"status":"completed","task":"+4"}`,
		`{"seq":1,"status":"completed","task":1099511627777}`,
		`{"seq":1,"status":"completed","duration_s":1e309}`,
		`{"seq":1,"status":"completed","duration_s":1e-400}`,
		`{"seq":10000001,"status":"completed"}`,
		`{"seq":-0,"status":"completed"}`,
		`{"seq":1,"status":"bogus","status":"completed"}`,
		`{"seq":1,"status":"completed","status":"bogus"}`,
		`{"seq":1,"status":"completed"} {}`,
		`{"seq":1,"status":"completed",}`,
		`{"seq":1,"status":"completed","deep":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		`{"seq":1,"status":"completed","deep":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
		`{"seq":1,"status":"completed","file":null,"role":12}`,
		`{"seq":1,"status":"completed","file":{}}`,
		`{"seq":1,"status":1}`,
		`{"seq":null,"status":"completed"}`,
		`{}`, `[]`, `null`, ``,
	}
	lines = append(lines, lineSeeds...)
	corpus, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParseLine", "*"))
	require.NoError(t, err)
	for _, path := range corpus {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if line, ok := fuzzCorpusBytes(data); ok {
			lines = append(lines, string(line))
		}
	}
	for i, l := range lines {
		t.Run(fmt.Sprint(i), func(t *testing.T) { agreeWithEncodingJSON(t, []byte(l)) })
	}
	// The documented rule, checked on its own: an empty phase reads as null.
	e, err := ParseLine([]byte(`{"seq":1,"status":"completed","phase":""}`))
	require.NoError(t, err)
	assert.Nil(t, e.Phase)
}

// fuzzCorpusBytes reads the one []byte of a stored fuzz corpus file.
func fuzzCorpusBytes(data []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, false
	}
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(rest)), "[]byte(")
	if !ok {
		return nil, false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	return []byte(s), err == nil
}

// FuzzParseLineAgreesWithEncodingJSON checks ParseLine against encoding/json and
// the manifest's rules on any line.
func FuzzParseLineAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"seq":1,"status":"completed","phase":""}`))
	f.Fuzz(func(t *testing.T, line []byte) { agreeWithEncodingJSON(t, line) })
}
