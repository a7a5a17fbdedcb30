package mutate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
)

// MaxReplacementBytes bounds the size of a replacement template file.
const MaxReplacementBytes = 4 << 20

// Mutation is one `--mutate ORIG=REPL` flag: dispatches of template Orig get the
// text of the file Repl instead of Orig's text.
type Mutation struct {
	// Orig is the original template's file name as given, e.g. "build-reviewer-prompt.md".
	Orig string
	// Repl is the replacement's path as given on the command line.
	Repl string
	// Path is Repl resolved against the working directory (absolute, clean).
	Path string
	// Text is the replacement file's content, read when the flag was parsed.
	Text []byte
}

// Label returns the mutation as recorded in the manifest: "ORIG -> REPL", REPL as given.
func Label(m Mutation) string { return m.Orig + " -> " + m.Repl }

// Labels returns the Label of every mutation, in order.
func Labels(ms []Mutation) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, Label(m))
	}
	return out
}

// Parse parses and validates `--mutate` flags: each must be ORIG=REPL with ORIG a
// template file name (no path separator) named once, and REPL a readable regular
// file (relative paths resolve against cwd), read here so that nothing starts when
// one is missing. Every error is of kind ErrBadMutation.
func Parse(flags []string, cwd string) ([]Mutation, error) {
	var out []Mutation
	seen := map[string]string{}
	for _, flag := range flags {
		m, err := parseOne(flag, cwd)
		if err != nil {
			return nil, err
		}
		key := stem(m.Orig)
		if prev, ok := seen[key]; ok {
			return nil, usage("--mutate %s: template %q is already mutated by --mutate %s; give each template once", flag, m.Orig, prev)
		}
		seen[key] = flag
		out = append(out, m)
	}
	return out, nil
}

func parseOne(flag, cwd string) (Mutation, error) {
	orig, repl, ok := strings.Cut(flag, "=")
	orig, repl = strings.TrimSpace(orig), strings.TrimSpace(repl)
	switch {
	case !ok:
		return Mutation{}, usage("--mutate %q: want ORIG=REPL, e.g. --mutate build-reviewer-prompt.md=stricter.md", flag)
	case orig == "" || repl == "":
		return Mutation{}, usage("--mutate %q: both sides of ORIG=REPL must be non-empty", flag)
	case strings.ContainsAny(orig, `/\`) || orig == "." || orig == "..":
		return Mutation{}, usage("--mutate %q: ORIG must be a template file name like build-reviewer-prompt.md, not a path", flag)
	case strings.ContainsFunc(orig, isControl) || strings.ContainsFunc(repl, isControl):
		return Mutation{}, usage("--mutate %q: control characters are not allowed", flag)
	case stem(orig) == "":
		return Mutation{}, usage("--mutate %q: ORIG names no template", flag)
	}
	path := repl
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	text, err := readReplacement(path)
	if err != nil {
		return Mutation{}, usage("--mutate %s: replacement %s %s", flag, path, err.Error())
	}
	return Mutation{Orig: orig, Repl: repl, Path: path, Text: text}, nil
}

// readReplacement reads a replacement template; its errors are phrased to follow the path.
func readReplacement(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return nil, fmt.Errorf("does not exist; create it or fix the path")
	case err != nil:
		return nil, fmt.Errorf("cannot be read (%v); fix its permissions or the path", err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("is not a regular file; give the path of a template file")
	case st.Size() > MaxReplacementBytes:
		return nil, fmt.Errorf("is larger than %d bytes; a template must be smaller", MaxReplacementBytes)
	}
	// Read through the run-file reader: opened without blocking and checked again
	// on the open file, so a path swapped for a FIFO or a larger file after the
	// Stat above is refused, never waited on.
	text, err := runfile.ReadFile(path, runfile.Kind{What: "replacement template", Max: MaxReplacementBytes})
	switch {
	case errors.Is(err, runfile.ErrTooLarge):
		return nil, fmt.Errorf("is larger than %d bytes; a template must be smaller", MaxReplacementBytes)
	case errors.Is(err, runfile.ErrNotRegular):
		return nil, fmt.Errorf("is not a regular file; give the path of a template file")
	case err != nil:
		return nil, fmt.Errorf("cannot be read (%v); fix its permissions or the path", err)
	}
	return text, nil
}

func usage(format string, args ...any) error {
	return errkind.Errorf(ErrBadMutation, format, args...)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// stem reduces a template file name to its template name: "x-prompt.md", "x.md" and
// "x" all give "x".
func stem(name string) string {
	name = strings.TrimSuffix(name, ".md")
	return strings.TrimSuffix(name, "-prompt")
}

// Matches reports whether a dispatch of template (the "# Dispatch:" name, e.g.
// "build-reviewer") is mutated by m: ORIG "build-reviewer-prompt.md",
// "build-reviewer.md" and "build-reviewer" all match it.
func (m Mutation) Matches(template string) bool {
	t := stem(strings.TrimSpace(template))
	return t != "" && t == stem(m.Orig)
}

// For returns the first mutation that matches template, or nil.
func For(ms []Mutation, template string) *Mutation {
	for i := range ms {
		if ms[i].Matches(template) {
			return &ms[i]
		}
	}
	return nil
}

// Unused returns one warning per mutation that matches none of templates (the
// templates of the dispatches to re-execute).
func Unused(ms []Mutation, templates []string) []string {
	var out []string
	for _, m := range ms {
		used := false
		for _, t := range templates {
			if m.Matches(t) {
				used = true
				break
			}
		}
		if !used {
			out = append(out, fmt.Sprintf("--mutate %s: no dispatch to re-execute uses template %s; it changes nothing", m.Orig, m.Orig))
		}
	}
	return out
}

// ErrBadMutation is the kind of every error about a --mutate flag or its files: a
// malformed ORIG=REPL, a template named twice, a replacement that cannot be read.
var ErrBadMutation = errors.New("bad --mutate flag")
