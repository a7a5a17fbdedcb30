package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/replaytool/replay/internal/runfile"
	"io"
	"io/fs"
	"syscall"
)

// Convention is the line format of the manifest a line is appended to: which of
// the keys Crucible added over time its lines carry. Replay appends every line in
// the convention of the manifest it extends, so that the pipeline's own
// bookkeeping script and its readers see lines like their own (docs/upstream.md).
type Convention int

const (
	// ConventionNewer is the format of Crucible's scripts/dispatch.py after commit
	// 31fd5ec: model_profile right after model_tier on every line, actual_model on
	// completion lines, any model label. A new manifest (none yet, or no valid
	// line) gets it too.
	ConventionNewer Convention = iota
	// ConventionOlder is the format of dispatch.py at 31fd5ec: no model_profile, no
	// actual_model, and model tiers opus, sonnet and haiku only.
	ConventionOlder
	// ConventionAuto asks AppendEntryAs to use the manifest's own convention
	// (DetectConvention).
	ConventionAuto Convention = -1
)

// ParseConvention reads a convention's name: auto, older or newer.
func ParseConvention(name string) (Convention, bool) {
	switch name {
	case "auto", "":
		return ConventionAuto, true
	case "older":
		return ConventionOlder, true
	case "newer":
		return ConventionNewer, true
	}
	return ConventionAuto, false
}

// OlderModelTiers are the model tiers the older convention accepts, sorted as its
// script lists them.
var OlderModelTiers = []string{"haiku", "opus", "sonnet"}

// conventionHead is how much of a manifest's start DetectConvention reads: lines
// are at most MaxLineBytes, so it holds the first line and several more.
const conventionHead = 64 << 10

// DetectConvention returns the convention of the manifest at path, decided by its
// first valid entry line (a JSON object with a seq): ConventionNewer when that line
// has a model_profile key, ConventionOlder when it has none. A manifest that does
// not exist, or has no valid line in its first 64 KiB, is new: ConventionNewer.
// Lines appended later never change it: the first line is the pipeline's own.
func DetectConvention(path string) (Convention, error) {
	f, err := runfile.Open(path, runfile.ManifestHead)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return ConventionNewer, nil
		}
		return ConventionNewer, err
	}
	defer f.Close()
	return conventionOf(f)
}

// conventionOf is DetectConvention on an open manifest, read from its start with
// ReadAt (the file offset is not moved).
func conventionOf(r io.ReaderAt) (Convention, error) {
	head := make([]byte, conventionHead)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return ConventionNewer, err
	}
	head = head[:n]
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		head = rest
		var keys map[string]json.RawMessage
		if json.Unmarshal(line, &keys) != nil {
			continue
		}
		if _, ok := keys["seq"]; !ok {
			continue
		}
		if _, ok := keys[KeyModelProfile]; ok {
			return ConventionNewer, nil
		}
		return ConventionOlder, nil
	}
	return ConventionNewer, nil
}

// Shape returns e as a line of convention c: for the older convention without
// model_profile and actual_model; otherwise e unchanged.
func (c Convention) Shape(e Entry) Entry {
	if c != ConventionOlder || e.Extra == nil {
		return e
	}
	extra := make(map[string]json.RawMessage, len(e.Extra))
	for k, v := range e.Extra {
		if k != KeyModelProfile && k != KeyActualModel {
			extra[k] = v
		}
	}
	e.Extra = extra
	return e
}
