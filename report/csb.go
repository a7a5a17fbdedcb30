package report

import (
	"fmt"
	"io"
	"strings"
)

// CSB is the synthetic Compression State Block that seeds a resumed orchestrator.
type CSB struct {
	Goal          string   `json:"goal"`
	Skill         string   `json:"skill"`
	Phase         string   `json:"phase"`
	Progress      []string `json:"progress"`
	Decisions     []string `json:"key_decisions"`
	Constraints   []string `json:"active_constraints"`
	FilesModified []string `json:"files_modified"`
	ScratchDir    string   `json:"scratch_dir"`
	NextSteps     []string `json:"next_steps"`
	// Sources names where each part came from, for --verbose and --json.
	Sources map[string]string `json:"sources"`
	// Health is the block's health line; empty means "GREEN (reset on resume)".
	Health string `json:"health,omitempty"`
}

// WriteCSB renders the block between ===COMPRESSION_STATE=== and
// ===END_COMPRESSION_STATE=== in the replay specification's layout.
func WriteCSB(w io.Writer, c *CSB) error {
	var b strings.Builder
	b.WriteString("===COMPRESSION_STATE===\n")
	fmt.Fprintf(&b, "Goal: %s\n", orDash(c.Goal))
	fmt.Fprintf(&b, "Skill: %s\n", orDash(c.Skill))
	fmt.Fprintf(&b, "Phase: %s\n", orDash(c.Phase))
	health := c.Health
	if health == "" {
		health = "GREEN (reset on resume)"
	}
	fmt.Fprintf(&b, "Health: %s\n\n", health)
	list(&b, "Progress:", c.Progress, "- ")
	list(&b, "Key Decisions (prior session):", c.Decisions, "- ")
	list(&b, "Active Constraints:", c.Constraints, "- ")
	files := c.FilesModified
	if len(files) == 0 {
		files = []string{"see git log"}
	}
	list(&b, "Files Modified:", files, "- ")
	list(&b, "Scratch State:", []string{
		"Location: " + orDash(c.ScratchDir),
		"Recovery: pipeline-status.md, handoff manifests, manifest.jsonl",
	}, "- ")
	b.WriteString("Next Steps:\n")
	for i, s := range c.NextSteps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	b.WriteString("===END_COMPRESSION_STATE===\n")
	_, err := io.WriteString(w, SafeText(b.String()))
	return err
}

func list(b *strings.Builder, title string, items []string, bullet string) {
	b.WriteString(title + "\n")
	if len(items) == 0 {
		b.WriteString(bullet + "(none recorded)\n")
	}
	for _, it := range items {
		b.WriteString(bullet + it + "\n")
	}
	b.WriteString("\n")
}
