package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/replaytool/replay/internal/runfile"
)

// ManifestFile is the name of the manifest in a dispatch directory.
const ManifestFile = "manifest.jsonl"

// NextSeq returns one more than every seq ever used in dispatchDir: the valid entries
// of its manifest, a seq readable in a torn or corrupt line, and the <N>- prefixes of
// its dispatch and output files, and a seq readable in the sidecars of moved torn or
// corrupt lines. Parallel dispatches finish out of order, so this is
// never "last line + 1". A missing manifest, an empty or a missing directory give 1.
func NextSeq(dispatchDir string) (int, error) {
	top := 0
	path := filepath.Join(dispatchDir, ManifestFile)
	f, err := runfile.Open(path, runfile.Manifest)
	switch {
	case err == nil:
		m, perr := Parse(f, path)
		f.Close()
		if perr != nil {
			return 0, perr
		}
		top = m.MaxSeq
	case errors.Is(err, runfile.ErrNotRegular) || errors.Is(err, runfile.ErrTooLarge):
		return 0, err
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("%s: cannot open the manifest: %w", path, err)
	}
	return nextAfter(top, dispatchDir)
}

// NextSeqAfter is NextSeq for a manifest already read: one more than m.MaxSeq and
// every <N>- prefix of the files in dispatchDir.
func NextSeqAfter(m *Manifest, dispatchDir string) (int, error) {
	return nextAfter(m.MaxSeq, dispatchDir)
}

func nextAfter(top int, dispatchDir string) (int, error) {
	top = max(top, sidecarMaxSeq(dispatchDir))
	names, err := ListNames(dispatchDir)
	if errors.Is(err, fs.ErrNotExist) {
		return top + 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: cannot list the dispatch directory: %w", dispatchDir, err)
	}
	for _, name := range names {
		if n, ok := seqPrefix(name); ok {
			top = max(top, n)
		}
	}
	return top + 1, nil
}

// ListNames returns the names of the entries of dir, in no particular order: what
// os.ReadDir lists, without its sorting and without a DirEntry for each name.
func ListNames(dir string) ([]string, error) {
	//replay:door a directory listing (Readdirnames), no content read
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// seqPrefix reads the <N> of a "<N>-..." file name.
func seqPrefix(name string) (int, bool) {
	i := 0
	for i < len(name) && i < 10 && '0' <= name[i] && name[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(name) || name[i] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(name[:i])
	if err != nil || n > maxSeqValue {
		return 0, false
	}
	return n, true
}

// FindDispatched returns the last line of the manifest at path that Crucible's script
// takes as the dispatched entry of seq: a JSON object whose status is "dispatched"
// and whose seq equals seq as Python compares numbers (2.0 and 2 are equal). Its
// other fields may hold any JSON. It returns nil, nil when there is none.
func FindDispatched(path string, seq int) ([]byte, error) {
	return findLastRaw(path, func(line []byte) bool {
		var fields map[string]json.RawMessage
		if !bytes.Contains(line, []byte(`dispatched`)) || json.Unmarshal(line, &fields) != nil {
			return false
		}
		var status string
		return json.Unmarshal(fields["status"], &status) == nil && status == string(StatusDispatched) && pyEqualsInt(fields["seq"], seq)
	})
}

// pyEqualsInt reports whether the JSON value raw equals n in Python: a number of
// the same value, or true for 1 and false for 0.
func pyEqualsInt(raw json.RawMessage, n int) bool {
	s := string(bytes.TrimSpace(raw))
	switch {
	case s == "true":
		return n == 1
	case s == "false":
		return n == 0
	case s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')):
		return false
	case !strings.ContainsAny(s, ".eE"):
		v, ok := new(big.Int).SetString(s, 10)
		return ok && v.IsInt64() && v.Int64() == int64(n)
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == float64(n)
}

// findLastRaw returns a copy of the last line (trimmed) of the file at path that
// accept takes, reading backwards; nil when none does.
func findLastRaw(path string, accept func(line []byte) bool) ([]byte, error) {
	f, err := runfile.Open(path, runfile.Manifest)
	if errors.Is(err, runfile.ErrNotRegular) || errors.Is(err, runfile.ErrTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the manifest: %w", path, err)
	}
	defer f.Close()
	st := f.Stat()
	const chunk = 64 << 10
	pos := st.Size()
	var carry []byte // the start of a line whose beginning lies before pos
	overlong := false
	try := func(line []byte) []byte {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !accept(line) {
			return nil
		}
		return append([]byte(nil), line...)
	}
	for pos > 0 {
		n := min(int64(chunk), pos)
		pos -= n
		buf := make([]byte, n, int(n)+len(carry))
		if _, err := f.ReadAt(buf, pos); err != nil {
			return nil, fmt.Errorf("%s: cannot read: %w", path, err)
		}
		buf = append(buf, carry...)
		for {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if !overlong {
				if line := try(buf[i+1:]); line != nil {
					return line, nil
				}
			}
			overlong = false
			buf = buf[:i]
		}
		carry = buf
		if len(carry) > MaxReadLineBytes {
			carry, overlong = nil, true
		}
	}
	if !overlong {
		return try(carry), nil
	}
	return nil, nil
}

// pySpace reports whether Python's str.strip() removes r.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyJSONObject reports whether Python's json.loads reads line as a JSON object:
// JSON with the NaN, Infinity and -Infinity literals Python also accepts.
func pyJSONObject(line []byte) bool {
	v := bytes.Trim(line, " \t\n\r")
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	if json.Valid(v) {
		return true
	}
	// Replace Python's extra literals outside strings with 0 and try again.
	out := make([]byte, 0, len(v))
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inString {
			out = append(out, c)
			if c == '\\' && i+1 < len(v) {
				i++
				out = append(out, v[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case bytes.HasPrefix(v[i:], []byte("NaN")):
			out, i = append(out, '0'), i+2
			continue
		case bytes.HasPrefix(v[i:], []byte("Infinity")):
			out, i = append(out, '0'), i+7
			continue
		}
		out = append(out, c)
	}
	return json.Valid(out)
}
