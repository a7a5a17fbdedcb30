package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// SkipRow is one dispatch the resume skips.
type SkipRow struct {
	Seq     int    `json:"seq"`
	Role    string `json:"role"`
	Phase   string `json:"phase"`
	Task    string `json:"task,omitempty"`
	Summary string `json:"summary"`
	Verdict string `json:"verified_by,omitempty"`
}

// RedoRow is one dispatch the resume re-executes.
type RedoRow struct {
	Seq            int    `json:"seq"`
	Role           string `json:"role"`
	Phase          string `json:"phase"`
	Task           string `json:"task,omitempty"`
	OriginalStatus string `json:"original_status"`
	Template       string `json:"template"`
	// Run says how the item will run: "live", or "recording <key>" when a
	// recording would stand in for it.
	Run string `json:"run"`
}

// Plan is the "Replay Plan (dry-run)" of the replay specification.
type Plan struct {
	Source        string    `json:"source"`
	Project       string    `json:"project"`
	Skill         string    `json:"skill"`
	Profile       string    `json:"profile"`
	ProfileReason string    `json:"profile_reason"`
	Session       string    `json:"session"`
	Started       string    `json:"started"`
	CrashedAt     string    `json:"crashed_at"`
	ResumePoint   string    `json:"resume_point"`
	Checkpoint    string    `json:"checkpoint,omitempty"`
	WorkPreserved string    `json:"work_preserved"`
	NextSeq       int       `json:"next_seq"`
	Skip          []SkipRow `json:"skip"`
	Redo          []RedoRow `json:"redo"`
	Partial       []string  `json:"partial_commits"`
	Mutations     []string  `json:"mutations"`
	// FailedVerifications name, one line each, the verifications that moved the
	// resume point back, or that say why work is re-executed or may be done
	// again without moving it (seq, role, check, why).
	FailedVerifications []string `json:"failed_verifications"`
	// Preflight lists the checks run before anything is written and their outcome;
	// a line starting with "FAIL" stops a real run before it changes anything.
	Preflight []string `json:"preflight"`
	Warnings  []string `json:"warnings"`
	// Reuse is the share of the dispatches to re-execute that recordings would
	// serve, and why the others would not; nil when the run re-dispatches nothing.
	Reuse *ReuseScore `json:"reuse,omitempty"`
}

// WritePlan renders the plan as the specification's markdown, its tables in style.
func WritePlan(w io.Writer, p *Plan, style TableStyle) error {
	var b strings.Builder
	b.WriteString("# Replay Plan (dry-run)\n\n")
	fmt.Fprintf(&b, "**Source:** %s\n", Safe(p.Source))
	if p.Project != "" {
		fmt.Fprintf(&b, "**Project directory:** %s\n", Safe(p.Project))
	}
	fmt.Fprintf(&b, "**Original pipeline:** %s | Session: %s | Started: %s\n", Safe(orDash(p.Skill)), Safe(orDash(p.Session)), Safe(orDash(p.Started)))
	if p.Profile != "" {
		fmt.Fprintf(&b, "**Profile:** %s — %s\n", Safe(p.Profile), Safe(p.ProfileReason))
	}
	fmt.Fprintf(&b, "**Crashed at:** %s\n", Safe(p.CrashedAt))
	fmt.Fprintf(&b, "**Resume point:** %s\n", Safe(p.ResumePoint))
	fmt.Fprintf(&b, "**Work preserved:** %s\n", Safe(p.WorkPreserved))
	fmt.Fprintf(&b, "**Next seq:** %d\n\n", p.NextSeq)
	if len(p.FailedVerifications) > 0 {
		b.WriteString("## Failed verifications (they moved the resume point back, or say why work may be done again)\n\n")
		for _, s := range p.FailedVerifications {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	if _, err := io.WriteString(w, "## Dispatches to skip (verified complete)\n\n"); err != nil {
		return err
	}
	rows := make([][]string, 0, len(p.Skip))
	for _, r := range p.Skip {
		rows = append(rows, []string{fmt.Sprint(r.Seq), r.Role, r.Phase, style.Cell(r.Summary, 60)})
	}
	if err := tableOrNone(w, style, []string{"Seq", "Role", "Phase", "Summary"}, rows); err != nil {
		return err
	}

	if _, err := io.WriteString(w, "\n## Dispatches to re-execute\n\n"); err != nil {
		return err
	}
	rows = rows[:0]
	for _, r := range p.Redo {
		rows = append(rows, []string{fmt.Sprint(r.Seq), r.Role, r.Phase, r.OriginalStatus, r.Template, r.Run})
	}
	if err := tableOrNone(w, style, []string{"Seq", "Role", "Phase", "Original Status", "Template", "Runs"}, rows); err != nil {
		return err
	}

	return writePlanTail(w, p)
}

// writePlanTail renders the plan's sections after its tables.
func writePlanTail(w io.Writer, p *Plan) error {
	var b strings.Builder
	if len(p.Partial) > 0 {
		b.WriteString("\n## Partial commits (undone by the restore)\n\n")
		for _, s := range p.Partial {
			fmt.Fprintf(&b, "- %s\n", Safe(s))
		}
	}
	b.WriteString("\n## Template Mutations\n\n")
	if len(p.Mutations) == 0 {
		b.WriteString("- none\n")
	}
	for _, m := range p.Mutations {
		fmt.Fprintf(&b, "- %s\n", Safe(m))
	}
	if p.Reuse != nil {
		b.WriteString("\n")
		reuseSection(&b, p.Reuse, "would be")
	}
	if len(p.Preflight) > 0 {
		b.WriteString("\n## Checks before writing\n\n")
		for _, s := range p.Preflight {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, s := range p.Warnings {
			fmt.Fprintf(&b, "- %s\n", Safe(s))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tableOrNone(w io.Writer, style TableStyle, header []string, rows [][]string) error {
	if len(rows) == 0 {
		_, err := io.WriteString(w, "(none)\n")
		return err
	}
	return style.Write(w, header, rows)
}

// WriteJSON renders v as one indented JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Duration renders d as "2h 13m", "13m" or "45s".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%ds", s)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
