package report

import (
	"fmt"
	"strings"
)

// ReuseItem is one dispatch of a replay: whether a recording served it (or would
// serve it, in a plan), and why not.
type ReuseItem struct {
	Seq      int    `json:"seq"`
	Role     string `json:"role"`
	Template string `json:"template"`
	// Key is the first 12 hex digits of the dispatch's recording key.
	Key    string `json:"key,omitempty"`
	Served bool   `json:"served"`
	// Reason says why no recording serves it ("" when one does).
	Reason string `json:"reason,omitempty"`
	// Changed names the fingerprint fields of a stale recording.
	Changed []string `json:"changed,omitempty"`
	// External marks a dispatch of an external role that would run live; Refused
	// says the replay stops before anything is dispatched because of it.
	External bool `json:"external,omitempty"`
	Refused  bool `json:"refused,omitempty"`
}

// ReuseScore is the share of a replay's dispatches served from recordings.
type ReuseScore struct {
	// Mode is the --reuse mode (exact, template, never); "" when not known.
	Mode    string      `json:"mode,omitempty"`
	Served  int         `json:"served"`
	Total   int         `json:"total"`
	Refused int         `json:"refused,omitempty"`
	Items   []ReuseItem `json:"items"`
}

// Percent is the served share in whole percent; 0 for no dispatches.
func (s *ReuseScore) Percent() int {
	if s == nil || s.Total == 0 {
		return 0
	}
	return s.Served * 100 / s.Total
}

// reuseSection writes the score's "## Reuse score" section: the share, then one
// line per dispatch no recording serves, with why. verb is "would be" in a plan
// and "were" after a replay.
func reuseSection(b *strings.Builder, s *ReuseScore, verb string) {
	b.WriteString("## Reuse score\n\n")
	mode := ""
	if s.Mode != "" {
		mode = fmt.Sprintf(" (--reuse %s)", Safe(s.Mode))
	}
	if verb == "were" && s.Total == 1 {
		verb = "was"
	}
	fmt.Fprintf(b, "%d of %s %s served from recordings: %d%%%s.\n", s.Served, Count(s.Total, "dispatch"), verb, s.Percent(), mode)
	if s.Served < s.Total {
		b.WriteString("\n")
	}
	for _, it := range s.Items {
		if it.Served {
			continue
		}
		fmt.Fprintf(b, "- seq %d %s (%s): %s", it.Seq, Safe(it.Template), Safe(it.Role), Safe(it.Reason))
		switch {
		case it.Refused:
			b.WriteString("; external: needs a recording or --allow-external")
		case it.External:
			b.WriteString("; external: runs live")
		}
		b.WriteString("\n")
	}
}

// unservedOnly is the score with only the dispatches no recording served listed
// (the compact form of a JSONL line); nil stays nil.
func (s *ReuseScore) unservedOnly() *ReuseScore {
	if s == nil {
		return nil
	}
	out := *s
	out.Items = nil
	for _, it := range s.Items {
		if !it.Served {
			out.Items = append(out.Items, it)
		}
	}
	if out.Items == nil {
		out.Items = []ReuseItem{}
	}
	return &out
}
