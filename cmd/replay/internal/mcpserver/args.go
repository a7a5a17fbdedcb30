package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// toolSchema is a tool's input schema with its root and each property resolved
// for validation by the JSON Schema engine the MCP SDK validates with
// (github.com/google/jsonschema-go).
type toolSchema struct {
	*jsonschema.Schema
	root  *jsonschema.Resolved
	props map[string]*jsonschema.Resolved
}

// decodeArgs decodes a tool call's arguments into In after its schema validated
// them, with messages in the caller's words: the arguments must be a JSON object,
// every field must be one of the schema's, a required field must be there, each
// value must be valid under the field's schema. A null value is an absent field.
// The error is a usage refusal naming the tool and the field; it never shows a Go
// type.
func decodeArgs[In any](tool string, raw json.RawMessage, schema *toolSchema) (In, error) {
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
			return in, badInput(fmt.Sprintf("%s: unknown field %q; the fields are %s", tool, name, strings.Join(fieldNames(schema.Schema), ", ")))
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
	if err := schema.validate(tool, fields); err != nil {
		return in, err
	}
	clean, err := json.Marshal(fields)
	if err != nil {
		return in, badInput(fmt.Sprintf("%s: the arguments cannot be read: %s", tool, jsonKind(raw)))
	}
	if err := json.Unmarshal(clean, &in); err != nil {
		return in, badInput(fmt.Sprintf("%s: the arguments cannot be read as the tool's fields", tool))
	}
	return in, nil
}

// validate checks the arguments under the schema: each field under its own (so
// the refusal names it), then the whole object. A whole number written with a
// fraction (3.0) is an integer, as JSON Schema has it: it is rewritten as one.
func (s *toolSchema) validate(tool string, fields map[string]json.RawMessage) error {
	whole := map[string]any{}
	for _, name := range fieldNames(s.Schema) {
		v, ok := fields[name]
		if !ok {
			continue
		}
		var value any
		if err := json.Unmarshal(v, &value); err != nil || s.props[name].Validate(value) != nil {
			return badInput(fmt.Sprintf("%s: field %s: %s", tool, name, misfit(s.Properties[name], v)))
		}
		if n, isNum := value.(float64); isNum && typeOf(s.Properties[name]) == "integer" && n > -1<<53 && n < 1<<53 {
			fields[name] = json.RawMessage(strconv.FormatInt(int64(n), 10))
		}
		whole[name] = value
	}
	if err := s.root.Validate(whole); err != nil {
		return badInput(fmt.Sprintf("%s: the arguments do not fit the tool's schema: %v", tool, err))
	}
	return nil
}

// misfit says, in the caller's words, how a value its schema refused differs
// from what the field takes.
func misfit(p *jsonschema.Schema, v json.RawMessage) string {
	want := typeOf(p)
	got := jsonKind(v)
	if want == "array" && got == "array" && p.Items != nil {
		var items []json.RawMessage
		_ = json.Unmarshal(v, &items)
		for i, it := range items {
			if k := jsonKind(it); k != typeOf(p.Items) && (k != "integer" || typeOf(p.Items) != "number") {
				return fmt.Sprintf("item %d: got %s; give %s", i, article(k), article(typeOf(p.Items)))
			}
		}
	}
	if want == "integer" && got == "number" {
		return fmt.Sprintf("got %s, which is not a whole number; give an integer", strings.TrimSpace(string(v)))
	}
	return strings.TrimSpace(fmt.Sprintf("got %s; give %s %s", article(got), article(want), describeItems(p)))
}

// typeOf is the JSON type a schema takes, its first besides null.
func typeOf(p *jsonschema.Schema) string {
	if p.Type != "" {
		return p.Type
	}
	for _, t := range p.Types {
		if t != "null" {
			return t
		}
	}
	return ""
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
// descriptions, the ones without omitempty required, no other field allowed,
// resolved for validation.
func inputSchema[In any]() *toolSchema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", reflect.TypeFor[In](), err)) // a programming error, caught by the tests
	}
	slices.Sort(s.Required)
	ts := &toolSchema{Schema: s, props: map[string]*jsonschema.Resolved{}}
	if ts.root, err = s.Resolve(nil); err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", reflect.TypeFor[In](), err))
	}
	for name, p := range s.Properties {
		if ts.props[name], err = p.Resolve(nil); err != nil {
			panic(fmt.Sprintf("input schema of %s, field %s: %v", reflect.TypeFor[In](), name, err))
		}
	}
	return ts
}
