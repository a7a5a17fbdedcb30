package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/replaytool/replay/internal/runfile"
)

// MarkerFile is the name of the pipeline marker in a scratch directory.
const MarkerFile = ".pipeline-active"

// MarkerShape says which of the three historical shapes a marker had.
type MarkerShape string

// The three marker shapes: 8-key JSON, 6-key JSON (no branch, no baseline) and the
// oldest four text lines.
const (
	MarkerJSON8 MarkerShape = "json-8"
	MarkerJSON6 MarkerShape = "json-6"
	MarkerText4 MarkerShape = "text-4"
)

// Marker is the content of a .pipeline-active file. Fields absent from older shapes
// are empty.
type Marker struct {
	PipelineID  string      `json:"pipeline_id"`
	Skill       string      `json:"skill"`
	Phase       string      `json:"phase"`
	StartTime   string      `json:"start_time"`
	ScratchDir  string      `json:"scratch_dir"`
	DispatchDir string      `json:"dispatch_dir"`
	Branch      string      `json:"branch"`
	BaselineSHA string      `json:"baseline_sha"`
	Shape       MarkerShape `json:"shape"`
}

// HasBranch reports whether the marker recorded the pipeline's branch.
func (m *Marker) HasBranch() bool { return m.Branch != "" }

// ReadMarker reads and parses the marker file at path. A marker that is not a
// regular file (a FIFO, a device, a directory) or is larger than 64 KiB is an error.
func ReadMarker(path string) (*Marker, error) {
	data, err := runfile.ReadFile(path, runfile.Marker)
	if errors.Is(err, runfile.ErrNotRegular) || errors.Is(err, runfile.ErrTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the pipeline marker: %w", path, err)
	}
	m, err := ParseMarker(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// maxMarkerBytes bounds what ParseMarker accepts; real markers are a few hundred bytes.
const maxMarkerBytes = 64 << 10

// ParseMarker parses a marker in any of its three shapes.
func ParseMarker(data []byte) (*Marker, error) {
	if len(data) > maxMarkerBytes {
		return nil, fmt.Errorf("pipeline marker is %d bytes, more than the %d a marker can be; is this the right file?", len(data), maxMarkerBytes)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("pipeline marker is empty; delete it or restore it from the pipeline's scratch directory")
	}
	if trimmed[0] == '{' {
		return parseJSONMarker(trimmed)
	}
	return parseTextMarker(trimmed)
}

func parseJSONMarker(data []byte) (*Marker, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("pipeline marker is not valid JSON (%v); fix or delete it", err)
	}
	m := &Marker{}
	fields := []struct {
		key string
		dst *string
	}{
		{"pipeline_id", &m.PipelineID}, {"skill", &m.Skill}, {"phase", &m.Phase},
		{"start_time", &m.StartTime}, {"scratch_dir", &m.ScratchDir}, {"dispatch_dir", &m.DispatchDir},
		{"branch", &m.Branch}, {"baseline_sha", &m.BaselineSHA},
	}
	for _, f := range fields {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		s, err := scalarString(v)
		if err != nil {
			return nil, fmt.Errorf("pipeline marker field %q: %v", f.key, err)
		}
		*f.dst = s
	}
	if m.PipelineID == "" && m.DispatchDir == "" {
		return nil, fmt.Errorf("pipeline marker has neither pipeline_id nor dispatch_dir; it cannot name a pipeline")
	}
	m.Shape = MarkerJSON6
	if _, ok := raw["branch"]; ok {
		m.Shape = MarkerJSON8
	}
	return m, nil
}

// scalarString renders a JSON string, number, bool or null as a string.
func scalarString(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return "", nil
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return s, nil
	case '{', '[':
		return "", fmt.Errorf("want a string or number, got %s", string(v[:1]))
	}
	if _, err := strconv.ParseFloat(string(v), 64); err == nil {
		return string(v), nil
	}
	if string(v) == "true" || string(v) == "false" {
		return string(v), nil
	}
	return "", fmt.Errorf("want a string or number, got %q", string(v))
}

func parseTextMarker(data []byte) (*Marker, error) {
	m := &Marker{Shape: MarkerText4}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxMarkerBytes)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		key, val, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("pipeline marker line %d: want \"key: value\", got %q", line, clip(text, 60))
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "pipeline", "skill":
			m.Skill = val
		case "session-id", "session", "pipeline_id":
			m.PipelineID = val
		case "started", "start_time":
			m.StartTime = val
		case "dispatch-dir", "dispatch_dir":
			m.DispatchDir = val
		case "phase":
			m.Phase = val
		case "branch":
			m.Branch = val
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pipeline marker: %v", err)
	}
	if m.PipelineID == "" && m.DispatchDir == "" {
		return nil, fmt.Errorf("pipeline marker has neither session-id nor dispatch-dir; it cannot name a pipeline")
	}
	return m, nil
}

// clip shortens s to at most n bytes for an error message, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
