package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/replaytool/replay/internal/runfile"
)

// CountInputChars measures a dispatch file the way Crucible's bookkeeping script does
// for input_chars: the number of characters of the file read as UTF-8 text with
// universal newlines (CRLF and a lone CR count as one character each). path is
// absolute or relative to cwd. When the file cannot be read or is not valid UTF-8, n
// is nil and warning is the script's warning line (without newline), naming path as
// given and the reason in the script's words.
func CountInputChars(cwd, path string) (n *int, warning string) {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(cwd, path)
	}
	data, err := runfile.ReadFile(full, runfile.Dispatch)
	if st, serr := os.Stat(full); errors.Is(err, runfile.ErrNotRegular) && serr == nil && st.IsDir() {
		err = syscall.EISDIR // what reading a directory says to the script
	}
	if path == "" {
		err = syscall.ENOENT // an empty name names no file, not the working directory
	}
	if err != nil {
		return nil, inputWarning(path, osErrorText(err, path))
	}
	if msg, bad := utf8DecodeError(data); bad {
		return nil, inputWarning(path, msg)
	}
	count := utf8.RuneCount(data) - bytes.Count(data, []byte("\r\n"))
	return &count, ""
}

func inputWarning(path, reason string) string {
	return fmt.Sprintf("[dispatch WARN] cannot read dispatch file %s: %s; input_chars set to null", path, reason)
}

// osErrorText renders a failed open or read as Python renders an OSError:
// "[Errno 2] No such file or directory: '<path>'".
func osErrorText(err error, path string) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		// Go words the C library's message in lower case; Python prints it as is.
		text := errno.Error()
		if r, size := utf8.DecodeRuneInString(text); size > 0 {
			text = string(unicode.ToUpper(r)) + text[size:]
		}
		return fmt.Sprintf("[Errno %d] %s: %s", int(errno), text, pyRepr(path))
	}
	return fmt.Sprintf("%v: %s", err, pyRepr(path))
}

// utf8DecodeError reports the first invalid UTF-8 sequence of data in the words of
// Python's strict UTF-8 decoder ("'utf-8' codec can't decode byte 0xff in position
// 2: invalid start byte"); bad is false when data is valid.
func utf8DecodeError(data []byte) (msg string, bad bool) {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		if r, size := utf8.DecodeRune(data[i:]); r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		n, reason := invalidSequence(data[i:])
		if n == 1 {
			return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", c, i, reason), true
		}
		return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", i, i+n-1, reason), true
	}
	return "", false
}

// invalidSequence classifies the invalid sequence at the start of b as CPython's
// decoder does: how many bytes it reports and why.
func invalidSequence(b []byte) (int, string) {
	c := b[0]
	need := 0 // continuation bytes a valid sequence starting with c has
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c >= 0xE0 && c <= 0xEF:
		need = 2
	case c >= 0xF0 && c <= 0xF4:
		need = 3
	default:
		return 1, "invalid start byte"
	}
	valid := 0 // how many of the following bytes are acceptable continuations
	for k := 1; k <= need && k < len(b); k++ {
		cb := b[k]
		lo, hi := byte(0x80), byte(0xBF)
		if k == 1 {
			switch c {
			case 0xE0:
				lo = 0xA0
			case 0xED:
				hi = 0x9F
			case 0xF0:
				lo = 0x90
			case 0xF4:
				hi = 0x8F
			}
		}
		if cb < lo || cb > hi {
			return valid + 1, "invalid continuation byte"
		}
		valid++
	}
	return len(b), "unexpected end of data"
}

// pyRepr quotes s as Python's repr() quotes a str: single quotes unless s holds a
// single quote and no double quote, backslash escapes for the quote, backslash and
// \t \n \r, \xNN / \uNNNN / \UNNNNNNNN for characters that are not printable.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Python holds an undecodable argument byte as a lone surrogate.
			fmt.Fprintf(&b, `\udc%02x`, s[i])
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < utf8.RuneSelf || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	b.WriteByte(quote)
	return b.String()
}
