package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// The sidecars beside a manifest that hold the bytes replay moved out of it: a torn
// last line set aside before an append, and corrupt interior lines moved by Repair.
// Each moved piece is one line of its sidecar, its bytes unchanged.
const (
	TornSidecar    = ManifestFile + ".torn"
	CorruptSidecar = ManifestFile + ".corrupt"
)

// AppendResult says what AppendEntry did besides appending.
type AppendResult struct {
	// SetAside is the number of bytes of a torn last line moved to TornSidecar before
	// the append (0 when the manifest's last line was whole).
	SetAside int
	// Sidecar is the path of that sidecar when SetAside > 0.
	Sidecar string
}

// AppendEntry is Append that also reports what it set aside. Before appending to a
// manifest whose last non-blank line is not a JSON object (a line torn by a crash),
// it moves that line's bytes to TornSidecar beside the manifest and cuts them off,
// under the manifest's lock: appended after it, the fragment would become an interior
// corrupt line, and Crucible's own bookkeeping script then refuses every seq.
// The line is written in the manifest's own Convention.
func AppendEntry(manifestPath string, e Entry) (AppendResult, error) {
	return AppendEntryAs(manifestPath, e, ConventionAuto)
}

// AppendEntryAs is AppendEntry with the line written in convention conv, or in the
// manifest's own (read under its lock) when conv is ConventionAuto.
func AppendEntryAs(manifestPath string, e Entry, conv Convention) (AppendResult, error) {
	var res AppendResult
	if _, err := EncodeLine(e); err != nil {
		return res, fmt.Errorf("%s: %w", manifestPath, err)
	}
	err := safewrite.WithLock(manifestPath, func(f *os.File) error {
		// The line follows the convention of the manifest it extends, read
		// under the lock (see Convention).
		if conv == ConventionAuto {
			var err error
			if conv, err = conventionOf(f); err != nil {
				return fmt.Errorf("%s: cannot read its first lines: %w", manifestPath, err)
			}
		}
		line, err := EncodeLine(conv.Shape(e))
		if err != nil {
			return fmt.Errorf("%s: %w", manifestPath, err)
		}
		if res, err = setAsideTornTail(f, manifestPath); err != nil {
			return err
		}
		return safewrite.AppendLocked(f, manifestPath, line)
	})
	return res, err
}

// SetAsideTornTail moves a torn last line of the manifest at manifestPath to
// TornSidecar, under the manifest's lock, as AppendEntry does before its
// append, and appends nothing: a resume that hands work back to the skill
// leaves the manifest ending at a line's end, since the skill's dispatch.py
// appends its next line blindly, and glued onto the fragment that line would
// be unreadable (and every later seq refused). A manifest whose last line is
// whole is left alone.
func SetAsideTornTail(manifestPath string) (AppendResult, error) {
	var res AppendResult
	err := safewrite.WithLock(manifestPath, func(f *os.File) error {
		var err error
		res, err = setAsideTornTail(f, manifestPath)
		return err
	})
	return res, err
}

// setAsideTornTail moves a torn last line of the locked manifest f to TornSidecar:
// first appended (and fsync'd) to the sidecar, then cut from the manifest, so a crash
// in between leaves the bytes in both places, never in neither.
func setAsideTornTail(f *os.File, manifestPath string) (AppendResult, error) {
	var res AppendResult
	start, frag, err := tornTail(f)
	if errors.Is(err, runfile.ErrTooLarge) {
		return res, tornTooLarge(manifestPath)
	}
	if err != nil {
		return res, fmt.Errorf("%s: cannot read its last line: %w", manifestPath, err)
	}
	if frag == nil {
		return res, nil
	}
	sidecar := filepath.Join(filepath.Dir(manifestPath), TornSidecar)
	piece := append(tornLine(frag), '\n')
	if !endsWith(sidecar, piece) {
		if err := safewrite.AppendLine(sidecar, piece); err != nil {
			return res, err
		}
	}
	if err := f.Truncate(start); err != nil {
		return res, fmt.Errorf("%s: cannot cut the torn last line (its bytes are in %s): %w", manifestPath, sidecar, err)
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("%s: cannot fsync: %w", manifestPath, err)
	}
	return AppendResult{SetAside: len(piece) - 1, Sidecar: sidecar}, nil
}

// tornTooLarge is the refusal of a last line longer than any torn line, by
// append and repair alike.
func tornTooLarge(manifestPath string) error {
	return fmt.Errorf("%s: the last line runs over %s without a newline: %w of %s for a torn line; this is no crash's fragment: is this the right file? (nothing was written)", manifestPath, runfile.Size(maxTornLine), runfile.ErrTooLarge, runfile.Size(maxTornLine))
}

// tornLine returns a copy of the torn line's own bytes in raw (the line and
// anything after it, blank): up to its newline, its trailing blanks kept. A
// crash cuts a line anywhere, a space included, and the sidecar keeps the
// bytes the crash left, not a trimmed copy.
func tornLine(raw []byte) []byte {
	if j := bytes.IndexByte(raw, '\n'); j >= 0 {
		raw = raw[:j]
	}
	return append(make([]byte, 0, len(raw)+1), raw...)
}

// tornTail returns the offset and bytes (to the end of the file) of the last
// non-blank line of f when it is not a JSON object; nil bytes when it is one, or when
// the file is empty or blank.
func tornTail(f *os.File) (int64, []byte, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	size := st.Size()
	for n := min(size, 64<<10); ; n = min(size, 4*n, maxTornLine+1) {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		end := len(bytes.TrimRightFunc(buf, pySpace)) // blank as Python's strip() sees it
		if end == 0 && n == size {
			return 0, nil, nil
		}
		if i := bytes.LastIndexByte(buf[:end], '\n'); i >= 0 || n == size {
			line := buf[i+1 : end]
			if pyJSONObject(line) {
				return 0, nil, nil
			}
			if int64(len(buf)-i-1) > maxTornLine {
				return 0, nil, runfile.ErrTooLarge
			}
			return size - n + int64(i+1), buf[i+1:], nil
		}
		if n > maxTornLine {
			return 0, nil, runfile.ErrTooLarge // read no further: no line is this long
		}
	}
}

// maxTornLine is the longest torn last line an append sets aside: a manifest's
// lines are a few hundred bytes (an atomic append is at most PIPE_BUF), so a longer
// tail without a newline is not a crash's fragment but a planted or wrong file.
const maxTornLine = 16 << 20

// endsWith reports whether the file at path ends with tail.
func endsWith(path string, tail []byte) bool {
	f, err := runfile.OpenNoFollow(path, runfile.Manifest)
	if err != nil {
		return false // a special file or a link is refused by the append that follows
	}
	defer f.Close()
	st := f.Stat()
	if st.Size() < int64(len(tail)) {
		return false
	}
	buf := make([]byte, len(tail))
	if _, err := f.ReadAt(buf, st.Size()-int64(len(tail))); err != nil {
		return false
	}
	return bytes.Equal(buf, tail)
}

// CorruptLine is a line of a manifest that is not a JSON object, other than its last
// non-blank line.
type CorruptLine struct {
	// Line is its 1-based line number.
	Line int
	// Text is its bytes, without the newline.
	Text []byte
	// Seq is the seq it names, when one can be read whole (a complete `"seq": N`, or
	// the <N>- of a dispatch file name in it); HasSeq says whether there is one.
	Seq    int
	HasSeq bool
}

// InteriorCorruptLines returns the lines of the manifest at path that Crucible's
// script treats as corrupt before it hands out a seq: non-blank lines that are not
// JSON objects, except the last non-blank line, which may be torn by a crash, each
// with the seq it names where one can be read whole. A missing file has none.
func InteriorCorruptLines(path string) ([]CorruptLine, error) {
	data, err := runfile.ReadFile(path, runfile.Manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the manifest: %w", path, err)
	}
	lines := splitLines(data)
	var out []CorruptLine
	last := lastNonBlank(lines)
	for i, l := range lines {
		if i >= last || len(bytes.TrimFunc(l, pySpace)) == 0 || pyJSONObject(l) {
			continue
		}
		c := CorruptLine{Line: i + 1, Text: l}
		c.Seq, c.HasSeq = wholeSeq(l)
		out = append(out, c)
	}
	return out, nil
}

// splitLines splits data into lines at '\n', each without its newline and a '\r'
// before it; a last line without newline is a line too.
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		lines = append(lines, bytes.TrimSuffix(line, []byte("\r")))
	}
	return lines
}

// lastNonBlank returns the index of the last non-blank line, len(lines) when none.
func lastNonBlank(lines [][]byte) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if len(bytes.TrimFunc(lines[i], pySpace)) > 0 {
			return i
		}
	}
	return len(lines)
}

// wholeSeq reads the seq a damaged line names: a `"seq": N` whose digits end before
// the line does (a number cut by the tear could be the start of a larger one), else
// the <N>- prefix of a quoted dispatch file name.
func wholeSeq(line []byte) (int, bool) {
	if n, end, ok := seqDigits(line, []byte(`"seq"`), ':'); ok && end < len(line) {
		return n, true
	}
	for off := 0; off < len(line); {
		j := bytes.Index(line[off:], []byte(`"file"`))
		if j < 0 {
			break
		}
		i := off + j + len(`"file"`)
		off = i
		for i < len(line) && (line[i] == ' ' || line[i] == ':' || line[i] == '\t') {
			i++
		}
		if i < len(line) && line[i] == '"' {
			if n, ok := seqPrefix(string(line[i+1 : min(len(line), i+16)])); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// seqDigits finds key followed by sep and decimal digits in line; end is the offset
// just after the digits.
func seqDigits(line, key []byte, sep byte) (n, end int, ok bool) {
	for off := 0; ; {
		j := bytes.Index(line[off:], key)
		if j < 0 {
			return 0, 0, false
		}
		i := off + j + len(key)
		off = i
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) || line[i] != sep {
			continue
		}
		i++
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		d := i
		for i < len(line) && '0' <= line[i] && line[i] <= '9' && i-d < 10 {
			i++
		}
		if i == d {
			continue
		}
		v, err := strconv.Atoi(string(line[d:i]))
		if err != nil || v > maxSeqValue {
			continue
		}
		return v, i, true
	}
}

// sidecarMaxSeq returns the largest seq readable in the lines of the sidecars in
// dispatchDir (0 when there are none): a torn line moved out of the manifest still
// holds a seq that must not be handed out again.
func sidecarMaxSeq(dispatchDir string) int {
	top := 0
	for _, name := range []string{TornSidecar, CorruptSidecar} {
		data, err := runfile.ReadFile(filepath.Join(dispatchDir, name), runfile.Manifest)
		if err != nil {
			continue
		}
		for _, l := range splitLines(data) {
			if n, ok := scrapeSeq(l); ok {
				top = max(top, n)
			}
			if n, ok := wholeSeq(l); ok {
				top = max(top, n)
			}
		}
	}
	return top
}
