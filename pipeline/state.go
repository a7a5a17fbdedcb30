package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/replaytool/replay/internal/runfile"
)

// Handoff is a parsed handoff-N-to-M.md phase handoff manifest.
type Handoff struct {
	Path        string
	Goal        string
	Mode        string
	Inputs      []string
	Decisions   []string
	Constraints []string
	Shed        []string
}

// CompressionState is the "## Compression State" section of pipeline-status.md.
type CompressionState struct {
	Goal        string
	Decisions   []string
	Constraints []string
	NextSteps   []string
}

// BuildMode is the content of $TMPDIR/crucible-build-mode.md.
type BuildMode struct {
	Mode     string
	Baseline string
}

// maxStateFile bounds the scratch markdown files read for state reconstruction.
const maxStateFile = 1 << 20

// sections splits markdown into "## Heading" → lines, plus the lines before any
// heading under "".
func sections(data []byte) map[string][]string {
	out := map[string][]string{}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxStateFile)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = strings.TrimSpace(h)
			continue
		}
		out[cur] = append(out[cur], line)
	}
	return out
}

// The patterns of pipeline-status.md, compiled on first use (not at every start of
// the binary).
var (
	bulletRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(.*)$`) })
	boldKey  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\*\*([^*]+):\*\*\s*(.*)$`) })
)

func bullets(lines []string) []string {
	var out []string
	for _, l := range lines {
		if m := bulletRe().FindStringSubmatch(l); m != nil && strings.TrimSpace(m[1]) != "" {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return out
}

// ReadHandoff parses a handoff manifest.
func ReadHandoff(path string) (*Handoff, error) {
	data, err := runfile.ReadFile(path, runfile.Handoff)
	if err != nil {
		return nil, err
	}
	return parseHandoff(path, data), nil
}

// parseHandoff reads the goal, mode and bullet sections of a handoff manifest.
func parseHandoff(path string, data []byte) *Handoff {
	secs := sections(data)
	h := &Handoff{Path: path}
	for _, l := range secs[""] {
		if m := boldKey().FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			switch strings.ToLower(m[1]) {
			case "goal":
				h.Goal = m[2]
			case "mode":
				h.Mode = m[2]
			}
		}
	}
	for name, lines := range secs {
		switch {
		case strings.HasPrefix(name, "Inputs for Phase"):
			h.Inputs = bullets(lines)
		case name == "Decisions Carried Forward":
			h.Decisions = bullets(lines)
		case name == "Active Constraints":
			h.Constraints = bullets(lines)
		case name == "Shed Receipt":
			h.Shed = bullets(lines)
		}
	}
	return h
}

// ReadCompressionState parses the Compression State section of pipeline-status.md;
// ok is false when the file has no such section.
func ReadCompressionState(path string) (*CompressionState, bool, error) {
	data, err := runfile.ReadFile(path, runfile.PipelineStatus)
	if err != nil {
		return nil, false, err
	}
	cs, ok := parseCompressionState(data)
	return cs, ok, nil
}

// parseCompressionState reads the Compression State section of pipeline-status.md.
func parseCompressionState(data []byte) (*CompressionState, bool) {
	lines, ok := sections(data)["Compression State"]
	if !ok {
		return nil, false
	}
	cs := &CompressionState{}
	var cur *[]string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if m := bulletRe().FindStringSubmatch(l); m != nil && cur != nil {
			*cur = append(*cur, strings.TrimSpace(m[1]))
			continue
		}
		key, val, found := strings.Cut(strings.Trim(t, "*"), ":")
		if !found {
			continue
		}
		val = strings.TrimSpace(strings.TrimLeft(val, "*"))
		cur = nil
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "goal":
			cs.Goal = val
		case "key decisions":
			cur = &cs.Decisions
		case "active constraints":
			cur = &cs.Constraints
		case "next steps":
			cur = &cs.NextSteps
		}
		if cur != nil && val != "" {
			*cur = append(*cur, val)
		}
	}
	return cs, true
}

var shaRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9a-f]{7,40}\b`) })

// ReadBuildMode parses the build-mode file: "mode: feature|refactor" and a baseline
// SHA under any key that mentions "baseline".
func ReadBuildMode(path string) (*BuildMode, error) {
	data, err := runfile.ReadFile(path, runfile.BuildMode)
	if err != nil {
		return nil, err
	}
	return parseBuildMode(path, data)
}

// parseBuildMode reads the mode and baseline of a build-mode file.
func parseBuildMode(path string, data []byte) (*BuildMode, error) {
	bm := &BuildMode{}
	for _, l := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.Trim(key, "*- "))
		val = strings.TrimSpace(strings.Trim(strings.TrimSpace(val), "*`"))
		switch {
		case key == "mode":
			bm.Mode = strings.ToLower(val)
		case strings.Contains(key, "baseline"):
			if m := shaRe().FindString(val); m != "" {
				bm.Baseline = m
			}
		}
	}
	if bm.Mode != "feature" && bm.Mode != "refactor" {
		return nil, fmt.Errorf("%s: want \"mode: feature\" or \"mode: refactor\"", path)
	}
	return bm, nil
}

// HandoffFor returns the handoff manifest into phase, if one exists in scratch.
func HandoffFor(scratch, phase string) string {
	matches, _ := filepath.Glob(filepath.Join(scratch, "handoff-*-to-"+phase+".md"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}
