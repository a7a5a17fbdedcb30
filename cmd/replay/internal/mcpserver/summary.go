package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/replaytool/replay/report"
)

// summaryFields is how many of a document's top-level fields a summary names.
const summaryFields = 8

// summaryValue is how many characters of a string field a summary shows.
const summaryValue = 60

// summary is the one-line text of a successful call: the command line it ran and
// the document's first top-level fields, in the document's order (a string or
// number as key=value, a list as its length), escaped.
func summary(args []string, doc []byte) string {
	var b strings.Builder
	b.WriteString("replay")
	for _, a := range args {
		if a == "--" {
			continue
		}
		b.WriteString(" " + a)
	}
	b.WriteString(" --json: ok")
	if fields := topFields(doc); len(fields) > 0 {
		b.WriteString("; " + strings.Join(fields, ", "))
	}
	return report.SafeText(b.String())
}

// topFields describes the top-level fields of a JSON object, at most
// summaryFields of them; nil when doc is not an object.
func topFields(doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	for dec.More() && len(out) < summaryFields {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return out
		}
		if s := describe(fmt.Sprint(k), v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// describe is one field of a summary, "" for a field not worth a word (null, an
// empty string, a nested object).
func describe(key string, v any) string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return ""
		}
		if r := []rune(v); len(r) > summaryValue {
			v = string(r[:summaryValue]) + "…"
		}
		return key + "=" + v
	case json.Number, bool:
		return fmt.Sprintf("%s=%v", key, v)
	case []any:
		if len(v) == 1 {
			return key + ": 1 item"
		}
		return fmt.Sprintf("%s: %d items", key, len(v))
	}
	return ""
}
