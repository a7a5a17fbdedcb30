package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// ResponsesDir is the subdirectory of a dispatch directory that holds recorded
// responses, one <key>.json file per key.
const ResponsesDir = "responses"

// recordingVersion is the format version written into every recording.
const recordingVersion = 1

// Store holds recorded responses: <dispatchDir>/responses/<key>.json. Saves go to
// the first directory; lookups also search the read-only fallbacks added by Also.
type Store struct {
	root string // the dispatch directory saves are confined to
	dirs []string
}

// OpenStore returns the store of a dispatch directory. Nothing is created until the
// first Save.
func OpenStore(dispatchDir string) *Store {
	return &Store{root: dispatchDir, dirs: []string{filepath.Join(dispatchDir, ResponsesDir)}}
}

// Also adds the recordings of more dispatch directories (e.g. the durable copy in
// the scratch dir) as read-only fallbacks searched after the store's own, and
// returns s.
func (s *Store) Also(dispatchDirs ...string) *Store {
	for _, d := range dispatchDirs {
		s.dirs = append(s.dirs, filepath.Join(d, ResponsesDir))
	}
	return s
}

// Dir returns the directory the store saves recordings in.
func (s *Store) Dir() string { return s.dirs[0] }

// Path returns the file that holds (or would hold) key's recording.
func (s *Store) Path(key string) string { return filepath.Join(s.dirs[0], key+".json") }

// recording is the JSON form of one recorded response.
type recording struct {
	Version      int     `json:"version"`
	Key          string  `json:"key"`
	Dispatch     string  `json:"dispatch"`
	Template     string  `json:"template"`
	Role         string  `json:"role"`
	Phase        string  `json:"phase"`
	Task         *int    `json:"task"`
	Session      string  `json:"session"`
	Agent        string  `json:"agent"`
	RecordedAt   string  `json:"recorded_at"`
	Status       Status  `json:"status"`
	Summary      string  `json:"summary"`
	Verdict      string  `json:"verdict,omitempty"`
	Reason       string  `json:"reason,omitempty"`
	DurationS    float64 `json:"duration_s"`
	OutputChars  int     `json:"output_chars"`
	Truncated    bool    `json:"output_truncated,omitempty"`
	Output       string  `json:"output"`
	OutputBase64 string  `json:"output_base64,omitempty"`
}

func validKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	for _, c := range []byte(key) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Lookup returns the response recorded under key, with Reused and Key set. A key
// with no recording is (nil, false, nil); a recording that cannot be read is an
// error naming its file.
func (s *Store) Lookup(key string) (*Response, bool, error) {
	if !validKey(key) {
		return nil, false, fmt.Errorf("recorded responses: %q is not a recording key (64 hex digits)", key)
	}
	for _, dir := range s.dirs {
		path := filepath.Join(dir, key+".json")
		data, err := runfile.ReadFile(path, runfile.Recording)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: cannot read the recorded response: %w", path, err)
		}
		r, err := decodeRecording(data, key)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w; delete the file to record this dispatch again", path, err)
		}
		return r, true, nil
	}
	return nil, false, nil
}

func decodeRecording(data []byte, key string) (*Response, error) {
	var rec recording
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("not a recorded response: %w", err)
	}
	if rec.Key != key {
		return nil, fmt.Errorf("records key %q, not the %s its name says", rec.Key, key)
	}
	switch rec.Status {
	case manifest.StatusCompleted, manifest.StatusFailed, manifest.StatusError:
	default:
		return nil, fmt.Errorf("field status: %q is not completed, failed or error", rec.Status)
	}
	out := []byte(rec.Output)
	if rec.OutputBase64 != "" {
		var err error
		if out, err = base64.StdEncoding.DecodeString(rec.OutputBase64); err != nil {
			return nil, fmt.Errorf("field output_base64: %w", err)
		}
	}
	return &Response{
		Status: rec.Status, Summary: clipSummary(rec.Summary), Verdict: rec.Verdict, Output: out,
		OutputChars: rec.OutputChars, Truncated: rec.Truncated, DurationS: rec.DurationS,
		Reason: rec.Reason, Reused: true, Key: key, Agent: rec.Agent, RecordedBy: rec.Dispatch,
	}, nil
}

// Save records r under key, atomically (a temp file renamed into place), so a crash
// leaves either no recording or a whole one.
func (s *Store) Save(key string, req Request, r Response) error {
	if !validKey(key) {
		return fmt.Errorf("recorded responses: %q is not a recording key (64 hex digits)", key)
	}
	rec := recording{
		Version: recordingVersion, Key: key, Dispatch: req.ID(), Template: req.Template, Role: req.Role,
		Phase: req.Phase, Task: req.Task, Session: req.Session, Agent: r.Agent,
		RecordedAt: req.now().UTC().Format(time.RFC3339), Status: r.Status, Summary: r.Summary,
		Verdict: r.Verdict, Reason: r.Reason, DurationS: r.DurationS, OutputChars: r.OutputChars,
		Truncated: r.Truncated,
	}
	if utf8.Valid(r.Output) {
		rec.Output = string(r.Output)
	} else {
		rec.OutputBase64 = base64.StdEncoding.EncodeToString(r.Output)
	}
	var data bytes.Buffer
	if err := report.WriteJSON(&data, rec); err != nil {
		return fmt.Errorf("dispatch %s: cannot encode the response: %w", req.ID(), err)
	}
	// Within the dispatch dir as a root: a symlinked responses/ directory or recording
	// planted in the run is refused, never written through.
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the dispatch directory: %w", s.root, err)
	}
	return safewrite.WriteAtomicIn(s.root, filepath.Join(ResponsesDir, key+".json"), data.Bytes())
}
