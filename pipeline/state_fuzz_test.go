package pipeline

import (
	"strings"
	"testing"
)

var stateSeeds = []string{
	"# Handoff\n**Goal:** ship login\n**Mode:** feature\n\n## Inputs for Phase 3\n- plan.md\n\n## Decisions Carried Forward\n- tokens\n\n## Active Constraints\n- no deps\n\n## Shed Receipt\n- drafts\n",
	"## Compression State\n**Goal:** ship\nKey Decisions:\n- a\nActive Constraints: none\nNext Steps:\n- seq 19\n",
	"mode: feature\nbaseline: `3bdf5e7c`\n",
	"\x00\x1b[31m## \r\n## Compression State\n*:*\n- \n",
	strings.Repeat("## a\n", 100),
}

// FuzzParseHandoff checks that no handoff manifest panics the parser and that every
// bullet it keeps is trimmed and non-empty.
func FuzzParseHandoff(f *testing.F) {
	for _, s := range stateSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := parseHandoff("handoff-2-to-3.md", data)
		for _, list := range [][]string{h.Inputs, h.Decisions, h.Constraints, h.Shed} {
			for _, b := range list {
				if b == "" || strings.TrimSpace(b) != b {
					t.Fatalf("bullet %q is empty or untrimmed", b)
				}
			}
		}
	})
}

// FuzzParseCompressionState checks that no pipeline-status.md panics the parser.
func FuzzParseCompressionState(f *testing.F) {
	for _, s := range stateSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, ok := parseCompressionState(data)
		if ok != (cs != nil) {
			t.Fatalf("ok %v with state %v", ok, cs)
		}
	})
}

// FuzzParseBuildMode checks that a build-mode file either names feature or refactor
// or is an error, and that a baseline is hex.
func FuzzParseBuildMode(f *testing.F) {
	for _, s := range stateSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bm, err := parseBuildMode("crucible-build-mode.md", data)
		if err != nil {
			return
		}
		if bm.Mode != "feature" && bm.Mode != "refactor" {
			t.Fatalf("mode %q accepted", bm.Mode)
		}
		if strings.Trim(bm.Baseline, "0123456789abcdef") != "" {
			t.Fatalf("baseline %q is not hex", bm.Baseline)
		}
	})
}
