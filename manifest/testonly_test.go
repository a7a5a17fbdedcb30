package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/replaytool/replay/internal/runfile"
)

// Functions only the tests call: models of Crucible's script and shorthands of the
// product's own functions, kept beside the tests that use them.

// AppendNext takes the next free seq of the dispatch directory holding manifestPath
// and appends the entry build makes for it, both under the manifest's lock, so
// concurrent writers (two replays of one pipeline) never take the same seq. A torn
// last line is first moved to TornSidecar, and the line follows the manifest's
// Convention, as AppendEntry does.
func AppendNext(manifestPath string, build func(seq int) (Entry, error)) (Entry, error) {
	return AppendNextFrom(manifestPath, 0, build)
}

// FindLast returns the last valid line of the manifest at path for which match is
// true, reading the file backwards so that the cost depends on how far back the line
// is, not on the file's size. It returns nil, nil when no line matches.
func FindLast(path string, match func(*Entry) bool) (*Entry, error) {
	var p lineParser
	var found *Entry
	_, err := findLastRaw(path, func(line []byte) bool {
		if !bytes.Contains(line, []byte(`"seq"`)) {
			return false
		}
		e, err := p.parse(line)
		if err != nil || !match(&e) {
			return false
		}
		found = &e
		return true
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// InteriorCorrupt counts the lines of the manifest at path that Crucible's script
// treats as corrupt before it hands out a seq: non-blank lines that are not JSON,
// except the last non-blank line, which may be torn by a crash. A JSON line that is
// not an object counts too (the script would crash on it). Lines are split as the
// script reads them, with universal newlines. A missing file has none.
func InteriorCorrupt(path string) (int, error) {
	data, err := runfile.ReadFile(path, runfile.Manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: cannot read the manifest: %w", path, err)
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		data = bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
	}
	n := 0
	var pending []byte // the last non-blank line seen: corrupt only if another follows
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimFunc(line, pySpace)) == 0 {
			continue
		}
		if pending != nil && !pyJSONObject(pending) {
			n++
		}
		pending = line
	}
	return n, nil
}

// WithoutTornTail returns the bytes of a manifest that an append keeps in place: all
// of data except a last non-blank line that is not a JSON object, which the append
// moves to TornSidecar. The manifest after any number of appends starts with them.
func WithoutTornTail(data []byte) []byte {
	lines := splitLines(data)
	last := lastNonBlank(lines)
	if last == len(lines) || pyJSONObject(lines[last]) {
		return data
	}
	off := 0
	for i := 0; i < last; i++ {
		off += bytes.IndexByte(data[off:], '\n') + 1
	}
	return data[:off]
}
