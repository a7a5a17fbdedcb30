package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/replaytool/replay/internal/runfile"
)

// ManifestFile is the name of the manifest in a dispatch directory.
const ManifestFile = "manifest.jsonl"

// NextSeq returns one more than every seq ever used in dispatchDir: the valid entries
// of its manifest, a seq readable in a torn or corrupt line, and the <N>- prefixes of
// its dispatch and output files. Parallel dispatches finish out of order, so this is
// never "last line + 1". A missing manifest and an empty directory give 1.
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
	names, err := os.ReadDir(dispatchDir)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot list the dispatch directory: %w", dispatchDir, err)
	}
	for _, d := range names {
		if n, ok := seqPrefix(d.Name()); ok {
			top = max(top, n)
		}
	}
	return top + 1, nil
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

// FindLast returns the last valid line of the manifest at path for which match is
// true, reading the file backwards so that the cost depends on how far back the line
// is, not on the file's size. It returns nil, nil when no line matches.
func FindLast(path string, match func(*Entry) bool) (*Entry, error) {
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
	var p lineParser
	pos := st.Size()
	var carry []byte // the start of a line whose beginning lies before pos
	overlong := false
	try := func(line []byte) *Entry {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !bytes.Contains(line, []byte(`"seq"`)) {
			return nil
		}
		e, err := p.parse(line)
		if err != nil || !match(&e) {
			return nil
		}
		return &e
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
				if e := try(buf[i+1:]); e != nil {
					return e, nil
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
		if e := try(carry); e != nil {
			return e, nil
		}
	}
	return nil, nil
}
