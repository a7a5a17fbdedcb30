package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// demoWidth is the width the short demo is written for: the terminal's (or
// COLUMNS), at most 100, and 100 when neither is known.
func demoWidth(f *runEnv) int {
	w := f.TableStyle().Width
	if w <= 0 || w > 100 {
		return 100
	}
	return w
}

// demoDigests are, per step title, the lines of a step's output the short demo
// shows; the rest is counted and shown with --verbose. A step without an entry
// shows its first demoDigestLines non-blank lines.
var demoDigests = map[string][]*regexp.Regexp{
	"Which pipelines crashed?":              res(`^Session \S+ crashed at `),
	"Plan the resume (read-only)":           res(`^\*\*(Crashed at|Resume point|Work preserved|Next seq):\*\*`, `^- seq gap: `),
	"The safety guard":                      res(`^replay: cannot ask`),
	"Resume":                                res(`^- Restored checkpoint `, `^- Partial commit undone `, `^- Undo: `, `^New dispatches start at seq `),
	"A/B replay":                            res(`^\*\*Replay point:\*\*`, `^\d+ dispatches: `, `^\| Acceptance tests `, `^\| Quality gate rounds `),
	"Time travel":                           res(`^# State at seq `, `^1\. `),
	"Fork with a substituted verdict":       res(`^Fork `, `^seq \d+ answered by `),
	"The fork against its parent":           res(`^\| Acceptance tests `, `^- Seq \d+ .*: `),
	"Replicated A/B replay with a decision": res(`^\*\*Replicas:\*\*`, `^## Decision: `, `^Step \d of the rule: `),
}

// demoDigestLines is how many lines a step without a digest shows.
const demoDigestLines = 4

func res(patterns ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = regexp.MustCompile(p)
	}
	return out
}

// writeDemoDigest writes the lines of a step's output that the short demo shows,
// each wrapped to width, and how many it left out.
func writeDemoDigest(w io.Writer, title string, output []byte, width int) {
	lines := strings.Split(strings.TrimRight(string(output), "\n"), "\n")
	keep := demoDigests[title]
	shown, total := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		total++
		show := keep == nil && shown < demoDigestLines
		for _, re := range keep {
			if re.MatchString(l) {
				show = true
				break
			}
		}
		if show {
			shown++
			demoWrap(w, demoPlain(l), width, "  ", "    ")
		}
	}
	if total > shown {
		fmt.Fprintf(w, "  [%d more lines: replay demo --verbose, or run the command]\n", total-shown)
	}
}

// demoPlain turns a markdown line into text for the screen: bold markers and a
// table row's pipes go.
func demoPlain(l string) string {
	l = strings.ReplaceAll(l, "**", "")
	if strings.HasPrefix(l, "## ") {
		return strings.TrimPrefix(l, "## ")
	}
	if !strings.HasPrefix(l, "|") {
		return l
	}
	var cells []string
	for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	if len(cells) == 4 { // a comparison row: metric, original, replayed, delta
		return fmt.Sprintf("%s: %s in the original, %s in the replay (%s)", cells[0], cells[1], cells[2], cells[3])
	}
	return strings.Join(cells, ": ")
}

// demoWrap writes text wrapped at spaces to width, the first line starting with
// first, continuation lines with indent; a word longer than a line (a path) is cut.
func demoWrap(w io.Writer, text string, width int, first, indent string) {
	var b bytes.Buffer
	line := first
	flush := func() {
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
		line = indent
	}
	for _, word := range strings.Fields(text) {
		for len(line)+len(word) > width {
			room := width - len(line)
			if strings.TrimSpace(line) != "" && (len(word) <= width-len(indent) || room < 20) {
				flush()
				continue
			}
			line += word[:room]
			word = word[room:]
			flush()
		}
		line += word + " "
	}
	if strings.TrimSpace(line) != "" {
		flush()
	}
	_, _ = w.Write(b.Bytes())
}

// demoWrapCommand writes a shell command wrapped to width with " \\" at the end of
// every line but the last, so that it still pastes into a shell.
func demoWrapCommand(w io.Writer, words []string, width int) {
	line := "$"
	for _, word := range words {
		if len(line)+1+len(word)+2 > width && line != "$" {
			fmt.Fprintf(w, "%s \\\n", line)
			line = "   "
		}
		line += " " + word
	}
	fmt.Fprintln(w, line)
}
