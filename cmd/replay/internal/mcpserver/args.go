package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// decodeArgs decodes a tool call's arguments into In under its schema, with
// messages in the caller's words: the arguments must be a JSON object, every
// field must be one of the schema's, a required field must be there, each value
// must have the field's JSON type. A null value is an absent field. The error is
// a usage refusal naming the tool and the field; it never shows a Go type.
func decodeArgs[In any](tool string, raw json.RawMessage, schema *jsonschema.Schema) (In, error) {
	var in In
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return in, badInput(fmt.Sprintf("%s: the arguments must be a JSON object of the tool's fields, got %s", tool, jsonKind(raw)))
	}
	for name, v := range fields {
		if _, ok := schema.Properties[name]; !ok {
			return in, badInput(fmt.Sprintf("%s: unknown field %q; the fields are %s", tool, name, strings.Join(fieldNames(schema), ", ")))
		}
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(fields, name)
		}
	}
	for _, name := range schema.Required {
		if _, ok := fields[name]; !ok {
			return in, badInput(fmt.Sprintf("%s: field %s is required (%s)", tool, name, schema.Properties[name].Description))
		}
	}
	for name, v := range fields {
		if err := checkType(schema.Properties[name], v); err != nil {
			return in, badInput(fmt.Sprintf("%s: field %s: %v", tool, name, err))
		}
	}
	clean, err := json.Marshal(fields)
	if err != nil {
		return in, badInput(fmt.Sprintf("%s: the arguments cannot be read: %s", tool, jsonKind(raw)))
	}
	if err := json.Unmarshal(clean, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return in, badInput(fmt.Sprintf("%s: field %s: got %s, which it does not take", tool, te.Field, te.Value))
		}
		return in, badInput(fmt.Sprintf("%s: the arguments cannot be read as the tool's fields", tool))
	}
	return in, nil
}

// checkType checks that v has the JSON type the property's schema gives.
func checkType(p *jsonschema.Schema, v json.RawMessage) error {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	got := jsonKind(v)
	want := ""
	for _, t := range types {
		if t == "null" {
			continue
		}
		if want == "" {
			want = t
		}
		if t == got || t == "number" && got == "integer" {
			if t == "array" && p.Items != nil {
				var items []json.RawMessage
				if err := json.Unmarshal(v, &items); err != nil {
					return fmt.Errorf("got %s; give an array", got)
				}
				for i, it := range items {
					if err := checkType(p.Items, it); err != nil {
						return fmt.Errorf("item %d: %v", i, err)
					}
				}
			}
			return nil
		}
	}
	if want == "integer" && got == "number" {
		return fmt.Errorf("got %s, which is not a whole number; give an integer", strings.TrimSpace(string(v)))
	}
	return fmt.Errorf("got %s; give %s %s", article(got), article(want), describeItems(p))
}

// describeItems says what an array holds, "" for other types.
func describeItems(p *jsonschema.Schema) string {
	if p.Items == nil {
		return ""
	}
	t := p.Items.Type
	if t == "" && len(p.Items.Types) > 0 {
		t = p.Items.Types[0]
	}
	return "of " + t + "s"
}

// article puts "a" or "an" before a JSON type's name.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// jsonKind names the JSON type of v: object, array, string, boolean, integer,
// number, null, or "text that is not JSON".
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if !json.Valid(v) {
		return "text that is not JSON"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		if _, err := n.Int64(); err == nil {
			return "integer"
		}
	}
	return "number"
}

// fieldNames lists a schema's properties, sorted.
func fieldNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// inputSchema is the input schema of a tool taking In: its fields with their
// descriptions, the ones without omitempty required, no other field allowed.
func inputSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", reflect.TypeFor[In](), err)) // a programming error, caught by the tests
	}
	slices.Sort(s.Required)
	return s
}
