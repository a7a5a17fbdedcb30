package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/replaytool/replay/internal/runfile"
)

// MaxProfileSize bounds a profile file read with LoadFile: a profile is a few
// kilobytes; anything larger is not one.
const MaxProfileSize = 1 << 20

// ProfileError is a profile that cannot be used: the file (empty for an embedded
// profile), the field at fault in JSON path form ("boundaries[2].phase"), what is
// wrong and what to do.
type ProfileError struct {
	File  string
	Field string
	Msg   string
}

// Error renders the error as one line naming file, field and the fix.
func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString("pipeline profile")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Field != "" {
		b.WriteString(": field " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// LoadFile reads and validates the profile at path: a regular file of at most
// MaxProfileSize bytes. Every failure is a *ProfileError naming the file.
func LoadFile(path string) (*Profile, error) {
	// Stat before opening: opening a FIFO or a device could block or have effects.
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, &ProfileError{File: path, Msg: fmt.Sprintf("is not a regular file (%s); give the path of a profile JSON file", info.Mode().Type())}
	}
	// The size is checked below, by reading one byte more than the limit.
	f, err := runfile.Open(path, runfile.Kind{What: "profile", Max: 1<<63 - 1})
	if errors.Is(err, runfile.ErrNotRegular) {
		return nil, &ProfileError{File: path, Msg: "is not a regular file; give the path of a profile JSON file"}
	}
	if err != nil {
		return nil, &ProfileError{File: path, Msg: fmt.Sprintf("cannot open it (%v); give the path of a profile JSON file", unwrapPathError(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileSize+1))
	if err != nil {
		return nil, &ProfileError{File: path, Msg: fmt.Sprintf("cannot read it (%v)", err)}
	}
	if len(data) > MaxProfileSize {
		return nil, &ProfileError{File: path, Msg: fmt.Sprintf("is larger than %d bytes; a profile is a small JSON document", MaxProfileSize)}
	}
	p, err := Parse(data)
	if err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return p, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse parses and validates a profile. Unknown fields are rejected (a misspelt
// key would silently drop a boundary or a role). Errors are *ProfileError.
func Parse(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, decodeError(data, err)
	}
	if dec.More() {
		return nil, &ProfileError{Msg: "has more than one JSON document; keep exactly one object"}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// decodeError turns a JSON decoding error into a ProfileError with a field or a
// line:column.
func decodeError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return &ProfileError{Msg: fmt.Sprintf("line %d column %d: %v; fix the JSON syntax", line, col, syn)}
	case errors.As(err, &typ):
		return &ProfileError{Field: typ.Field, Msg: fmt.Sprintf("is a JSON %s, want %s", typ.Value, typ.Type)}
	case errors.Is(err, io.EOF):
		return &ProfileError{Msg: "is empty; write a JSON object with skill, phases, boundaries and roles"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &ProfileError{Msg: "ends in the middle of the JSON document; complete it"}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &ProfileError{Field: strings.Trim(name, `"`), Msg: "is not a profile field; known fields: skill, source, phases, boundaries, roles, gate_roles, test_roles, commit_window_tolerance_s"}
	}
	return &ProfileError{Msg: msg}
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
