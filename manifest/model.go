package manifest

import "encoding/json"

// The model keys newer Crucible versions write after model_tier: model_profile, the
// neutral profile of the model-tier label, and actual_model, the model a completion
// line says the subagent actually ran on. Replay keeps them in Entry.Extra and writes
// them right after model_tier (model_profile first), not among the sorted unknown keys.
const (
	KeyModelProfile = "model_profile"
	KeyActualModel  = "actual_model"
)

// labelKeys are the keys written right after model_tier, in this order.
var labelKeys = []string{KeyModelProfile, KeyActualModel}

// modelProfiles maps the model-tier labels replay knows to their neutral profile.
// opus → high and standard → standard are what Crucible's newer bookkeeping script
// records; sonnet → standard, haiku → low and the profile names mapping to
// themselves are replay's choice where upstream pins nothing (docs/upstream.md).
var modelProfiles = map[string]string{
	"opus": "high", "high": "high",
	"sonnet": "standard", "standard": "standard",
	"haiku": "low", "low": "low",
}

// ModelProfile returns the neutral profile of a model-tier label: nil for a label
// replay does not know (a free-form "provider/custom-model") and for no label. Labels
// are matched exactly, as given.
func ModelProfile(label *string) *string {
	if label == nil {
		return nil
	}
	p, ok := modelProfiles[*label]
	if !ok {
		return nil
	}
	return &p
}

// RawText returns s as a JSON value for Entry.Extra: a string, or null for nil.
func RawText(s *string) json.RawMessage {
	if s == nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(appendString(nil, *s))
}
