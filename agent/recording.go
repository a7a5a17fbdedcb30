package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// RecordingFormat names the format of a recording file (the "format" field of a
// version 2 recording).
const RecordingFormat = "replay-recording"

// RecordingVersion is the format version Save writes. Version 1 recordings (a flat
// object, no integrity hash, no fingerprint) are still read.
const RecordingVersion = 2

// recording is the payload of one recorded response: in version 1 the whole file,
// in version 2 the "payload" object of the envelope.
type recording struct {
	Version      int          `json:"version,omitempty"`
	Key          string       `json:"key"`
	Dispatch     string       `json:"dispatch"`
	Template     string       `json:"template"`
	Role         string       `json:"role"`
	Phase        string       `json:"phase"`
	Task         *int         `json:"task"`
	Session      string       `json:"session"`
	Agent        string       `json:"agent"`
	RecordedAt   string       `json:"recorded_at"`
	Status       Status       `json:"status"`
	Summary      string       `json:"summary"`
	Verdict      string       `json:"verdict,omitempty"`
	Reason       string       `json:"reason,omitempty"`
	DurationS    float64      `json:"duration_s"`
	OutputChars  int          `json:"output_chars"`
	Truncated    bool         `json:"output_truncated,omitempty"`
	Output       string       `json:"output"`
	OutputBase64 string       `json:"output_base64,omitempty"`
	Fingerprint  *Fingerprint `json:"fingerprint,omitempty"`
	Effects      *Effects     `json:"effects,omitempty"`
}

// envelope is a version 2 recording file: the payload and its sha256, taken over
// the payload's compact JSON encoding (so re-indenting the file keeps it valid,
// and changing any value breaks it).
type envelope struct {
	Format        string          `json:"format"`
	Version       int             `json:"version"`
	Key           string          `json:"key"`
	PayloadSHA256 string          `json:"payload_sha256"`
	Payload       json.RawMessage `json:"payload"`
}

// encodeRecording returns the version 2 file of r recorded under key for req.
func encodeRecording(key string, req Request, r Response) ([]byte, error) {
	rec := recording{
		Key: key, Dispatch: req.ID(), Template: req.Template, Role: req.Role,
		Phase: req.Phase, Task: req.Task, Session: req.Session, Agent: r.Agent,
		RecordedAt: req.now().UTC().Format(time.RFC3339), Status: r.Status, Summary: r.Summary,
		Verdict: r.Verdict, Reason: r.Reason, DurationS: r.DurationS, OutputChars: r.OutputChars,
		Truncated: r.Truncated, Fingerprint: r.Fingerprint, Effects: r.Effects,
	}
	if utf8.Valid(r.Output) {
		rec.Output = string(r.Output)
	} else {
		rec.OutputBase64 = base64.StdEncoding.EncodeToString(r.Output)
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	env := envelope{
		Format: RecordingFormat, Version: RecordingVersion, Key: key,
		PayloadSHA256: sha256Hex(payload), Payload: payload,
	}
	var data bytes.Buffer
	if err := report.WriteJSON(&data, env); err != nil {
		return nil, err
	}
	return data.Bytes(), nil
}

// decodeRecording checks and decodes a recording file of either version; nothing of
// a recording that fails a check is returned.
func decodeRecording(data []byte, key string) (*Response, error) {
	var head struct {
		Version int             `json:"version"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a recorded response (truncated or not JSON): %w", err)
	}
	var rec recording
	switch {
	case head.Version > RecordingVersion:
		return nil, fmt.Errorf("field version: %d is newer than this replay reads (%d); upgrade replay", head.Version, RecordingVersion)
	case head.Version == RecordingVersion:
		payload, err := openEnvelope(data, key)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(payload, &rec); err != nil {
			return nil, fmt.Errorf("field payload: %w", err)
		}
	case head.Version < 0, head.Payload != nil:
		return nil, fmt.Errorf("field version: %d is not a recording version (1 or %d)", head.Version, RecordingVersion)
	default: // version 1, or no version field: the flat format
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("not a recorded response: %w", err)
		}
		rec.Fingerprint, rec.Effects = nil, nil
	}
	return recordingResponse(rec, key)
}

// openEnvelope checks a version 2 file's format, key and payload hash and returns
// its payload in compact form.
func openEnvelope(data []byte, key string) ([]byte, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("not a recorded response: %w", err)
	}
	if env.Format != RecordingFormat {
		return nil, fmt.Errorf("field format: %q is not %q", env.Format, RecordingFormat)
	}
	if env.Key != key {
		return nil, fmt.Errorf("records key %q, not the %s its name says", env.Key, key)
	}
	if len(env.Payload) == 0 {
		return nil, fmt.Errorf("field payload: missing")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, env.Payload); err != nil {
		return nil, fmt.Errorf("field payload: %w", err)
	}
	if got := sha256Hex(compact.Bytes()); got != env.PayloadSHA256 {
		return nil, fmt.Errorf("integrity check failed: the payload hashes to sha256 %s, the recording says %q (the file was changed after it was written)", got[:12], report.SafeText(clip(env.PayloadSHA256, 64)))
	}
	return compact.Bytes(), nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// recordingResponse checks a decoded payload and turns it into the reused Response.
func recordingResponse(rec recording, key string) (*Response, error) {
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
		Fingerprint: rec.Fingerprint, Effects: rec.Effects,
	}, nil
}
