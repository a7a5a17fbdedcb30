package cli

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file holds what `replay manifest` needs to behave like Crucible's
// scripts/dispatch.py on the command line: its integer arguments, its messages
// printed as they are, and its file names printed safely.

// scriptError is an error whose message is printed on stderr exactly as it is (no
// "replay: " prefix, no usage hint), with its own exit code: the messages and exit
// codes of the bookkeeping script that `replay manifest` replaces.
type scriptError struct {
	code int
	msg  string
}

// Error returns the message.
func (e *scriptError) Error() string { return e.msg }

// ExitCode returns the exit code.
func (e *scriptError) ExitCode() int { return e.code }

// scriptFail returns a scriptError with code and a formatted message.
func scriptFail(code int, format string, args ...any) error {
	return &scriptError{code: code, msg: fmt.Sprintf(format, args...)}
}

// pyInt is a flag value read like Python's int() reads a command-line argument:
// optional surrounding whitespace and sign, decimal digits (any script's), single
// underscores between digits. A value beyond ±2^53 is refused as out of range.
type pyInt struct {
	set   bool
	value int64
}

// String returns the value as decimal, or "" when unset.
func (p *pyInt) String() string {
	if !p.set {
		return ""
	}
	return fmt.Sprint(p.value)
}

// Set parses s.
func (p *pyInt) Set(s string) error {
	n, err := parsePyInt(s)
	if err != nil {
		return err
	}
	p.set, p.value = true, n
	return nil
}

// Type names the value in help.
func (p *pyInt) Type() string { return "int" }

// ptr returns the value as *int, nil when unset.
func (p *pyInt) ptr() *int {
	if !p.set {
		return nil
	}
	n := int(p.value)
	return &n
}

// maxPyInt bounds integers so that they stay exact in every field (duration_s is a float).
const maxPyInt = 1 << 53

func parsePyInt(s string) (int64, error) {
	invalid := fmt.Errorf("invalid int value: %s", pyQuote(s))
	t := strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "" {
		return 0, invalid
	}
	var digits strings.Builder
	prevDigit := false
	for _, r := range t {
		switch {
		case r == '_' && prevDigit:
			prevDigit = false
		case unicode.Is(unicode.Nd, r):
			digits.WriteByte(byte('0' + digitValue(r)))
			prevDigit = true
		default:
			return 0, invalid
		}
	}
	if !prevDigit {
		return 0, invalid
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return 0, invalid
	}
	if neg {
		n.Neg(n)
	}
	if !n.IsInt64() || n.Int64() > maxPyInt || n.Int64() < -maxPyInt {
		return 0, fmt.Errorf("%s is out of range (at most %d)", pyQuote(s), int64(maxPyInt))
	}
	return n.Int64(), nil
}

// digitValue returns the value of a Unicode decimal digit: Nd digits come in
// contiguous runs of whole blocks of ten, each block starting at its zero.
func digitValue(r rune) int {
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// pyQuote quotes s in single quotes as Python's repr() does for plain text, with
// control characters escaped.
func pyQuote(s string) string {
	q := shownText(s)
	if strings.Contains(q, "'") && !strings.Contains(q, `"`) {
		return `"` + q + `"`
	}
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

// shownText returns text read from a run's files or arguments, safe to print on a
// terminal: control characters (C0, DEL, C1) and bytes that are not UTF-8 are
// written as escapes; everything else, non-ASCII text included, is kept.
func shownText(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// nullOr renders an optional number as Python prints it: None when absent.
func nullOr(n *int) string {
	if n == nil {
		return "None"
	}
	return fmt.Sprint(*n)
}

// validDuration refuses a negative duration (the script would write it).
func validDuration(d *int) error {
	if d != nil && *d < 0 {
		return usageError("--duration %d: want whole seconds, 0 or more", *d)
	}
	return nil
}

// acceptFlagPrefixes lets cmd take any unique prefix of a long flag name, as the
// script's argparse does (--model for --model-tier); an ambiguous prefix stays an
// unknown flag.
func acceptFlagPrefixes(cmd *cobra.Command) {
	cmd.Flags().SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		exact, match, matches := false, "", 0
		f.VisitAll(func(fl *pflag.Flag) {
			switch {
			case fl.Name == name:
				exact = true
			case name != "" && strings.HasPrefix(fl.Name, name):
				match = fl.Name
				matches++
			}
		})
		if exact || matches != 1 {
			return pflag.NormalizedName(name)
		}
		return pflag.NormalizedName(match)
	})
}
