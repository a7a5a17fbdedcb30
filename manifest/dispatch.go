package manifest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/replaytool/replay/internal/runfile"
)

// DispatchHeader is the 4-line audit header of a dispatch file (SPEC §2).
type DispatchHeader struct {
	Template string
	Pipeline string
	Phase    string
	Task     string
	// Timestamp is the parsed **Timestamp:**; zero when it was missing or unreadable
	// (TimestampRaw keeps the text).
	Timestamp    time.Time
	TimestampRaw string
	DispatchDir  string
}

// maxHeaderLines bounds how far ParseDispatchHeader looks for the "---" separator.
const maxHeaderLines = 16

// ParseDispatchHeader parses a dispatch file's audit header and returns the body
// after the "---" line. The header lines after "# Dispatch:" may come in any order;
// unknown "**Key:**" lines are ignored. An unreadable timestamp is kept as text.
func ParseDispatchHeader(data []byte) (*DispatchHeader, []byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	rest := data
	h := &DispatchHeader{}
	for n := 1; ; n++ {
		if len(rest) == 0 {
			if n == 1 {
				return nil, nil, fmt.Errorf("empty dispatch file; want a \"# Dispatch: <template>\" header")
			}
			return nil, nil, fmt.Errorf("dispatch header has no \"---\" line ending it")
		}
		if n > maxHeaderLines {
			return nil, nil, fmt.Errorf("dispatch header has no \"---\" line in its first %d lines", maxHeaderLines)
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		text := strings.TrimSpace(string(line))
		if n == 1 {
			tmpl, ok := strings.CutPrefix(text, "# Dispatch:")
			if !ok {
				return nil, nil, fmt.Errorf("line 1: want \"# Dispatch: <template>\", got %q", clip(text, 40))
			}
			h.Template = strings.TrimSpace(tmpl)
			continue
		}
		if text == "---" {
			return h, rest, nil
		}
		h.setFields(text)
	}
}

// CutDispatchHeader is what is left of a dispatch file's audit header a crash
// cut before its "---" line: read-only evidence that a dispatch of Template
// was being written, never a dispatch.
type CutDispatchHeader struct {
	// Template is the "# Dispatch:" line's, which the crash left whole.
	Template string
	// Phase and Task are what is left of those fields.
	Phase, Task CutField
}

// CutField is what a crash left of one header field.
type CutField struct {
	// Seen says the field's key was read whole; Whole that its value ended
	// (a "|" or the line's newline came after it) before the cut, else Value
	// is only how the value written began. An unseen field says nothing.
	Seen, Whole bool
	Value       string
}

// ParseCutDispatchHeader reads what is left of a dispatch file cut inside its
// audit header (a crash while it was written): the "# Dispatch:" line, whole
// (ended by a newline), then the fields of the lines after it, those of the
// last line cut where the crash came. ok is false for a file
// ParseDispatchHeader reads, one with a "---" line, one whose first line is
// not whole or no dispatch header, and one longer than a header.
func ParseCutDispatchHeader(data []byte) (h *CutDispatchHeader, ok bool) {
	if _, _, err := ParseDispatchHeader(data); err == nil {
		return nil, false
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 || len(lines) > maxHeaderLines {
		return nil, false
	}
	tmpl, found := strings.CutPrefix(strings.TrimSpace(lines[0]), "# Dispatch:")
	if !found {
		return nil, false
	}
	h = &CutDispatchHeader{Template: strings.TrimSpace(tmpl)}
	for n, line := range lines[1:] {
		last := n == len(lines)-2 // the line the crash cut (empty when it came right after a newline)
		if !last && strings.TrimSpace(line) == "---" {
			return nil, false
		}
		parts := strings.Split(line, "|")
		for i, part := range parts {
			key, val, ok := headerField(part)
			if !ok {
				continue
			}
			f := CutField{Seen: true, Whole: !last || i < len(parts)-1, Value: val}
			switch key {
			case "phase":
				h.Phase = f
			case "task":
				h.Task = f
			}
		}
	}
	return h, true
}

// CouldBe reports whether the header of a dispatch of phase and task (""
// for none) could begin as what is left of h: each field the crash left is
// that value whole, or how it is written begins.
func (h *CutDispatchHeader) CouldBe(phase, task string) bool {
	return h.Phase.couldBe(phase) && h.Task.couldBe(task)
}

// couldBe reports whether what is left of f could be want written ("" for
// none, as ParseDispatchHeader reads it).
func (f CutField) couldBe(want string) bool {
	switch {
	case !f.Seen:
		return true
	case f.Whole:
		return noneAsEmpty(f.Value) == want
	case want == "":
		// every way a header writes "no task" (noneAsEmpty)
		for _, w := range []string{"", "-", "none", "null", "n/a", "—"} {
			if strings.HasPrefix(w, strings.ToLower(f.Value)) {
				return true
			}
		}
		return false
	default:
		return strings.HasPrefix(want, f.Value)
	}
}

// setFields reads the "**Key:** value" pairs of one header line ("|" separates
// several on the Pipeline line).
func (h *DispatchHeader) setFields(text string) {
	for part := range strings.SplitSeq(text, "|") {
		key, val, ok := headerField(part)
		if !ok {
			continue
		}
		switch key {
		case "pipeline":
			h.Pipeline = val
		case "phase":
			h.Phase = noneAsEmpty(val)
		case "task":
			h.Task = noneAsEmpty(val)
		case "timestamp":
			h.TimestampRaw = val
			if t, ok := parseTime(val); ok {
				h.Timestamp = t
			}
		case "dispatch-dir", "dispatch dir", "dispatch_dir":
			h.DispatchDir = val
		}
	}
}

// headerField reads one "**Key:** value" pair: the key in lower case, the
// value trimmed.
func headerField(part string) (key, val string, ok bool) {
	key, val, ok = strings.Cut(strings.TrimSpace(part), ":**")
	if !ok || !strings.HasPrefix(key, "**") {
		return "", "", false
	}
	return strings.ToLower(strings.TrimSpace(key[2:])), strings.TrimSpace(val), true
}

func noneAsEmpty(s string) string {
	switch strings.ToLower(s) {
	case "-", "none", "null", "n/a", "—":
		return ""
	}
	return s
}

// parseTime accepts RFC 3339 and "YYYY-MM-DD HH:MM:SS" / "YYYY-MM-DDTHH:MM:SS" (UTC).
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// FormatDispatchFile returns a dispatch file: the 4-line audit header, a blank line,
// "---" and body. An empty phase or task is written as "-"; the timestamp is RFC 3339 UTC.
func FormatDispatchFile(h DispatchHeader, body []byte) []byte {
	var b bytes.Buffer
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	ts := h.TimestampRaw
	if !h.Timestamp.IsZero() {
		ts = h.Timestamp.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(&b, "# Dispatch: %s\n", oneLine(h.Template))
	fmt.Fprintf(&b, "**Pipeline:** %s | **Phase:** %s | **Task:** %s\n", oneLine(h.Pipeline), dash(oneLine(h.Phase)), dash(oneLine(h.Task)))
	fmt.Fprintf(&b, "**Timestamp:** %s\n", oneLine(ts))
	fmt.Fprintf(&b, "**Dispatch-Dir:** %s\n\n---\n", oneLine(h.DispatchDir))
	b.Write(body)
	return b.Bytes()
}

// oneLine keeps a header value on its line and away from the "|" separator.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ", "|", "/").Replace(s)
}

// DispatchKind says whether a numbered file in a dispatch directory is a dispatch
// file or an output file.
type DispatchKind string

// The kinds of numbered files in a dispatch directory.
const (
	KindDispatch DispatchKind = "dispatch"
	KindOutput   DispatchKind = "output"
)

// DispatchFile is one numbered file of a dispatch directory.
type DispatchFile struct {
	Seq  int
	Name string
	Path string
	Kind DispatchKind
	// Template is the "# Dispatch:" template of a dispatch file.
	Template string
	// Header is a dispatch file's parsed audit header; nil for an output file or
	// when HeaderErr says why it could not be parsed.
	Header    *DispatchHeader
	HeaderErr error
	// Cut is what is left of a header a crash cut before its "---" line
	// (ParseCutDispatchHeader), when HeaderErr says so: evidence, never a dispatch.
	Cut *CutDispatchHeader
}

// headBytes is how much of a numbered file ReadDispatchDir reads: enough for the
// first line and a dispatch file's audit header.
const headBytes = 4096

// ReadDispatchDir lists the numbered files of a dispatch directory by seq: dispatch
// files (first line "# Dispatch:") and output files (any other "<N>-*" regular file).
func ReadDispatchDir(dir string) ([]DispatchFile, error) {
	//replay:door a directory listing (Readdirnames), no content read; the dispatch files are read through runfile.Heads
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot list the dispatch directory: %w", dir, err)
	}
	// Unsorted: the files are sorted by seq below.
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot list the dispatch directory: %w", dir, err)
	}
	out := make([]DispatchFile, 0, len(entries))
	for _, d := range entries {
		seq, ok := seqPrefix(d.Name())
		if !ok || !d.Type().IsRegular() {
			continue
		}
		out = append(out, DispatchFile{Seq: seq, Name: d.Name(), Path: filepath.Join(dir, d.Name()), Kind: KindOutput})
	}
	// The heads are read by a few readers at once, each over its own run of
	// names the listing found regular (ReadListedAll), each filling in its own
	// entries.
	heads := runfile.OpenHeads(dir, runfile.Dispatch)
	defer heads.Close()
	forEachRun(len(out), func(lo, hi int) {
		names := make([]string, hi-lo)
		for i := range names {
			names[i] = out[lo+i].Name
		}
		heads.ReadListedAll(names, headBytes, func(i int, head []byte, err error) {
			classifyHead(&out[lo+i], head, err)
		})
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seq != out[j].Seq {
			return out[i].Seq < out[j].Seq
		}
		if out[i].Kind != out[j].Kind {
			return out[i].Kind == KindDispatch
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// classifyHead marks df a dispatch file, with its template and parsed header
// (which keeps nothing of head), when its head starts with a dispatch header.
func classifyHead(df *DispatchFile, head []byte, err error) {
	if err != nil {
		return
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	first = bytes.TrimPrefix(bytes.TrimSpace(first), []byte("\xef\xbb\xbf"))
	if tmpl, ok := bytes.CutPrefix(first, []byte("# Dispatch:")); ok {
		df.Kind, df.Template = KindDispatch, string(bytes.TrimSpace(tmpl))
		if df.Header, _, df.HeaderErr = ParseDispatchHeader(head); df.HeaderErr != nil {
			df.Header, df.HeaderErr = nil, fmt.Errorf("%s: %w", df.Path, df.HeaderErr)
			df.Cut, _ = ParseCutDispatchHeader(head)
		}
	}
}

// forEachRun splits 0..n-1 into one run of indexes per processor (fewer when n
// is small) and calls f(lo, hi) for each on its own goroutine, returning when all
// have returned. f must only touch state of its own indexes.
func forEachRun(n int, f func(lo, hi int)) {
	runs := max(min(runtime.GOMAXPROCS(0), n/minRun), 1)
	var wg sync.WaitGroup
	for r := 0; r < runs; r++ {
		lo, hi := r*n/runs, (r+1)*n/runs
		if r == runs-1 {
			f(lo, hi)
			break
		}
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// minRun is the fewest files worth a reader of their own.
const minRun = 64
