package manifest

import "encoding/json"

// Status is the lifecycle state recorded on a manifest line.
type Status string

// The statuses a manifest line can carry.
const (
	StatusDispatched Status = "dispatched"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
	StatusError      Status = "error"
	StatusSkipped    Status = "skipped"
	// StatusReplayed marks an entry that a replay re-executed (Crucible's replay
	// skill has the orchestrator write it); the replay's own entries carry replay_of.
	StatusReplayed Status = "replayed"
)

// Final reports whether s ends a dispatch (anything but dispatched).
func (s Status) Final() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusError, StatusSkipped, StatusReplayed:
		return true
	}
	return false
}

// Entry is one manifest line, or after deduplication the authoritative state of one
// seq. Nullable fields are pointers; keys the tool does not know are kept in Extra and
// written back unchanged.
type Entry struct {
	Seq           int      `json:"seq"`
	File          string   `json:"file"`
	Role          string   `json:"role"`
	Phase         *string  `json:"phase"`
	Task          *int     `json:"task"`
	Status        Status   `json:"status"`
	DurationS     *float64 `json:"duration_s"`
	Summary       *string  `json:"summary"`
	InputChars    *int     `json:"input_chars"`
	OutputChars   *int     `json:"output_chars"`
	ModelTier     *string  `json:"model_tier"`
	ToolCalls     *int     `json:"tool_calls"`
	ReplayOf      *int     `json:"replay_of,omitempty"`
	ReplaySession *string  `json:"replay_session,omitempty"`
	Mutation      *string  `json:"mutation,omitempty"`

	// Extra holds unknown keys, kept and ignored.
	Extra map[string]json.RawMessage `json:"-"`
	// Line is the 1-based line number of the line this entry was read from (for a
	// deduplicated entry: its authoritative, last line).
	Line int `json:"-"`
	// FirstLine is the 1-based line number of the seq's first valid line (its
	// first dispatched line, as upstream appends them): with Line it orders a
	// seq's start against another seq's end, whatever its dispatch file's header
	// says (a retry on the same seq rewrites that).
	FirstLine int `json:"-"`
	// Inherited names the fields (phase, task, role, file) that the authoritative line
	// left null or empty and that were taken from an earlier line of the same seq.
	Inherited []string `json:"-"`
}
