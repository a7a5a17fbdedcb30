package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/safewrite"
)

// ReplayDiff is the comparison of an original pipeline run and one A/B replay of it
// (seed Step 8), as plain data. Unknown numbers are nil pointers.
type ReplayDiff struct {
	OriginalSession string `json:"original_session"`
	ReplaySession   string `json:"replay_session"`
	// Generated is when the comparison was made (the injected clock); zero leaves it out.
	Generated time.Time `json:"generated_at,omitzero"`
	// Mutations are the "ORIG -> REPL" labels of the replay.
	Mutations []string    `json:"mutations"`
	Metrics   DiffMetrics `json:"metrics"`
	Outcome   DiffOutcome `json:"outcome"`
	// ResumeSeq is the first original seq the replay re-executed (0: none).
	ResumeSeq int `json:"resume_seq"`
	// Phases holds dispatch and gate-round counts per phase, in pipeline order.
	Phases []PhaseCounts `json:"phases"`
	// Dispatches compares each re-executed original dispatch with its replay, then
	// lists replay dispatches that re-execute no original one.
	Dispatches      []DispatchComparison `json:"dispatches"`
	FirstDivergence *Divergence          `json:"first_divergence"`
	// ArtifactDiff is nil when the final commits of the two runs are unknown.
	ArtifactDiff *ArtifactDiff `json:"artifact_diff"`
	// OriginalFinalSHA and ReplayFinalSHA are the two final commits compared, as
	// recorded when the replay ran: `replay diff` re-renders from them, so the same
	// comparison gives the same numbers later. Empty when unknown.
	OriginalFinalSHA string `json:"original_final_sha,omitempty"`
	ReplayFinalSHA   string `json:"replay_final_sha,omitempty"`
	// Reuse is the share of the replay's dispatches served from recordings, and why
	// the others ran live; nil when the replay made none.
	Reuse *ReuseScore `json:"reuse,omitempty"`
}

// DiffMetrics are the outcome numbers of the two runs, each run taken as a whole:
// the replayed run is the original's dispatches before the resume point plus the
// replay's own dispatches.
type DiffMetrics struct {
	OriginalDispatches int  `json:"original_dispatches"`
	ReplayedDispatches int  `json:"replayed_dispatches"`
	OriginalGateRounds int  `json:"original_gate_rounds"`
	ReplayedGateRounds int  `json:"replayed_gate_rounds"`
	OriginalDurationM  *int `json:"original_duration_m"`
	ReplayedDurationM  *int `json:"replayed_duration_m"`
	// Reexecuted counts the original dispatches from the resume point on;
	// ReplayEntries counts the dispatches the replay made in their place.
	Reexecuted    int `json:"reexecuted_dispatches"`
	ReplayEntries int `json:"replay_dispatches"`
}

// DiffOutcome holds the acceptance-test verdict of each run: "PASS", "FAIL" or
// "UNKNOWN".
type DiffOutcome struct {
	Original string `json:"original"`
	Replayed string `json:"replayed"`
}

// PhaseCounts are the dispatch and quality-gate counts of one phase in both runs.
type PhaseCounts struct {
	Phase              string `json:"phase"`
	Name               string `json:"name,omitempty"`
	OriginalDispatches int    `json:"original_dispatches"`
	ReplayedDispatches int    `json:"replayed_dispatches"`
	OriginalGateRounds int    `json:"original_gate_rounds"`
	ReplayedGateRounds int    `json:"replayed_gate_rounds"`
}

// DispatchComparison is one row of the per-dispatch comparison. OriginalSeq is 0 for
// a dispatch only the replay made; ReplayedSeq is 0 for an original dispatch the
// replay did not re-run.
type DispatchComparison struct {
	OriginalSeq       int      `json:"original_seq,omitempty"`
	ReplayedSeq       int      `json:"replayed_seq,omitempty"`
	Role              string   `json:"role"`
	Phase             string   `json:"phase,omitempty"`
	Task              string   `json:"task,omitempty"`
	OriginalStatus    string   `json:"original_status,omitempty"`
	ReplayedStatus    string   `json:"replayed_status,omitempty"`
	OriginalDurationS *float64 `json:"original_duration_s,omitempty"`
	ReplayedDurationS *float64 `json:"replayed_duration_s,omitempty"`
	OriginalSummary   string   `json:"original_summary,omitempty"`
	ReplayedSummary   string   `json:"replayed_summary,omitempty"`
	// SummaryDelta is "=" (equal), a word diff (WordDelta), "new: ..." or
	// "not re-run".
	SummaryDelta string `json:"summary_delta"`
	Mutation     string `json:"mutation,omitempty"`
}

// Divergence is the first dispatch, in dependency order, at which the replay's
// outcome differs from the original's, and the dispatches that follow from it.
type Divergence struct {
	DispatchComparison
	// Reason says what differs: "status", "summary", "not re-run" or "new dispatch".
	Reason     string               `json:"reason"`
	Downstream []DownstreamDispatch `json:"downstream"`
}

// DownstreamDispatch is an original dispatch that follows from a divergence: same
// task, or later in the same phase.
type DownstreamDispatch struct {
	Seq   int    `json:"seq"`
	Role  string `json:"role"`
	Phase string `json:"phase,omitempty"`
	Task  string `json:"task,omitempty"`
}

// ArtifactDiff is the size of `git diff From..To`, counted as `git diff --shortstat`.
type ArtifactDiff struct {
	From         string `json:"from"`
	To           string `json:"to"`
	FilesChanged int    `json:"files_changed"`
	Insertions   int    `json:"insertions"`
	Deletions    int    `json:"deletions"`
}

// WriteDiffMarkdown renders d in the replay specification's markdown layout: title,
// template mutations, outcome table, per-dispatch table, first divergence and
// artifact diff. Its tables are markdown with no width limit (the file's form).
func WriteDiffMarkdown(w io.Writer, d *ReplayDiff) error {
	return WriteDiff(w, d, TableStyle{})
}

// WriteDiff is WriteDiffMarkdown with the tables drawn in style (the screen's form).
func WriteDiff(w io.Writer, d *ReplayDiff, style TableStyle) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Replay Diff: %s vs %s\n\n", orDash(d.OriginalSession), orDash(d.ReplaySession))
	if !d.Generated.IsZero() {
		fmt.Fprintf(&b, "Generated: %s\n\n", d.Generated.UTC().Format(time.RFC3339))
	}
	b.WriteString("## Template Mutations\n")
	if len(d.Mutations) == 0 {
		b.WriteString("- (none)\n")
	}
	for _, m := range d.Mutations {
		fmt.Fprintf(&b, "- %s\n", oneLineText(m))
	}
	b.WriteString("\n## Outcome Comparison\n")
	if err := writeString(w, b.String()); err != nil {
		return err
	}
	m := d.Metrics
	rows := [][]string{
		{"Total dispatches", fmt.Sprint(m.OriginalDispatches), fmt.Sprint(m.ReplayedDispatches), signed(m.ReplayedDispatches - m.OriginalDispatches)},
		{"Quality gate rounds", fmt.Sprint(m.OriginalGateRounds), fmt.Sprint(m.ReplayedGateRounds), signed(m.ReplayedGateRounds - m.OriginalGateRounds)},
		{"Wall clock from the resume point", hoursMinutes(m.OriginalDurationM), hoursMinutes(m.ReplayedDurationM), minutesDelta(m.OriginalDurationM, m.ReplayedDurationM)},
		{"Acceptance tests", orDash(d.Outcome.Original), orDash(d.Outcome.Replayed), outcomeDelta(d.Outcome)},
	}
	if err := style.Write(w, []string{"Metric", "Original", "Replayed", "Delta"}, rows); err != nil {
		return err
	}
	b.Reset()
	b.WriteString(scopeNote(d))
	b.WriteString("\n## Per-Dispatch Comparison\n")
	if err := writeString(w, b.String()); err != nil {
		return err
	}
	if err := tableOrNone(w, style, []string{"Seq", "Role", "Original Status", "Replayed Status", "Summary Delta"}, dispatchRows(d.Dispatches, style)); err != nil {
		return err
	}
	b.Reset()
	if d.Reuse != nil {
		b.WriteString("\n")
		reuseSection(&b, d.Reuse, "were")
	}
	b.WriteString("\n## First Divergence\n")
	writeDivergence(&b, d.FirstDivergence)
	b.WriteString("\n## Artifact Diff\n")
	writeArtifact(&b, d.ArtifactDiff)
	return writeString(w, b.String())
}

// writeString writes s, a part of the diff built from the runs' values, with its
// control characters and overrides escaped (SafeText).
func writeString(w io.Writer, s string) error {
	_, err := io.WriteString(w, SafeText(s))
	return err
}

// scopeNote says which part of the run the replay re-executed.
func scopeNote(d *ReplayDiff) string {
	m := d.Metrics
	if d.ResumeSeq == 0 {
		return fmt.Sprintf("\nThe replay made %s and re-executed no original dispatch.\n", Count(m.ReplayEntries, "dispatch"))
	}
	shared := ""
	switch {
	case d.ResumeSeq == 2:
		shared = "; seq 1 is shared by both runs"
	case d.ResumeSeq > 2:
		shared = fmt.Sprintf("; seq 1-%d are shared by both runs", d.ResumeSeq-1)
	}
	return fmt.Sprintf("\nThe replay re-executed %s from seq %d on as %s%s.\n",
		Count(m.Reexecuted, "original dispatch"), d.ResumeSeq, Count(m.ReplayEntries, "dispatch"), shared)
}

func dispatchRows(ds []DispatchComparison, style TableStyle) [][]string {
	rows := make([][]string, 0, len(ds))
	for _, r := range ds {
		rows = append(rows, []string{
			seqPair(r.OriginalSeq, r.ReplayedSeq), r.Role,
			statusCell(r.OriginalStatus, r.OriginalDurationS), statusCell(r.ReplayedStatus, r.ReplayedDurationS),
			summaryChange(r, style),
		})
	}
	return rows
}

// summaryChange is the Summary Delta cell of a row: the word change between the
// two summaries in their context (WordChange) when both runs made the dispatch,
// else the row's own SummaryDelta ("not re-run", "new: ...", "earlier attempt at
// ..."). A changed run of words is cut after 60 runes in markdown, 120 in a text
// table, which wraps it.
func summaryChange(r DispatchComparison, style TableStyle) string {
	if r.OriginalSeq == 0 || r.ReplayedSeq == 0 || strings.HasPrefix(r.SummaryDelta, "earlier attempt at ") {
		return r.SummaryDelta
	}
	limit := 60
	if style.Text {
		limit = 120
	}
	return WordChange(r.OriginalSummary, r.ReplayedSummary, limit)
}

func seqPair(orig, repl int) string { return seqOrDash(orig) + " → " + seqOrDash(repl) }

func seqOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// statusCell renders "completed (200s)", or "-" when there is no dispatch.
func statusCell(status string, durationS *float64) string {
	if status == "" {
		return "-"
	}
	if durationS == nil {
		return status
	}
	return fmt.Sprintf("%s (%.0fs)", status, *durationS)
}

func writeDivergence(b *strings.Builder, dv *Divergence) {
	if dv == nil {
		b.WriteString("- None: every re-executed dispatch ended with the same status and summary.\n")
		return
	}
	where := []string{dv.Role}
	if dv.Phase != "" {
		where = append(where, "phase "+dv.Phase)
	}
	if dv.Task != "" {
		where = append(where, "task "+dv.Task)
	}
	switch {
	case dv.OriginalSeq == 0:
		fmt.Fprintf(b, "- Seq %d (%s): new dispatch in the replay, %s\n", dv.ReplayedSeq, strings.Join(where, ", "), orDash(dv.ReplayedStatus))
	case dv.ReplayedSeq == 0:
		fmt.Fprintf(b, "- Seq %d (%s): %s in the original, not re-run in the replay\n", dv.OriginalSeq, strings.Join(where, ", "), orDash(dv.OriginalStatus))
	default:
		fmt.Fprintf(b, "- Seq %d (%s), replayed as seq %d: %s → %s (%s differs)\n", dv.OriginalSeq, strings.Join(where, ", "), dv.ReplayedSeq,
			orDash(dv.OriginalStatus), orDash(dv.ReplayedStatus), dv.Reason)
	}
	if dv.OriginalSeq != 0 {
		fmt.Fprintf(b, "  - Original: %s\n", orDash(Clip(oneLineText(dv.OriginalSummary), 160)))
	}
	if dv.ReplayedSeq != 0 {
		fmt.Fprintf(b, "  - Replayed: %s\n", orDash(Clip(oneLineText(dv.ReplayedSummary), 160)))
	}
	if len(dv.Downstream) == 0 {
		b.WriteString("- Downstream: none\n")
		return
	}
	parts := make([]string, 0, len(dv.Downstream))
	for _, ds := range dv.Downstream {
		p := fmt.Sprintf("seq %d %s", ds.Seq, ds.Role)
		if ds.Task != "" {
			p += " (task " + ds.Task + ")"
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(b, "- Downstream: %s\n", strings.Join(parts, ", "))
}

func writeArtifact(b *strings.Builder, a *ArtifactDiff) {
	if a == nil {
		b.WriteString("- not available: the final commit of a run is unknown\n")
		return
	}
	fmt.Fprintf(b, "- git diff %s..%s\n", a.From, a.To)
	fmt.Fprintf(b, "  %s changed, +%d/-%d lines\n", Count(a.FilesChanged, "file"), a.Insertions, a.Deletions)
}

// signed renders a delta as "+3", "-2" or "0".
func signed(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}

// hoursMinutes renders minutes as "Xh Ym", or "unknown".
func hoursMinutes(m *int) string {
	if m == nil {
		return "unknown"
	}
	sign := ""
	v := *m
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%dh %dm", sign, v/60, v%60)
}

func minutesDelta(a, b *int) string {
	if a == nil || b == nil {
		return "n/a"
	}
	return signed(*b-*a) + "m"
}

func outcomeDelta(o DiffOutcome) string {
	if o.Original == o.Replayed {
		return "="
	}
	return "changed"
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// diffLine is the seed's {"type":"replay-diff",...} line, fields in the seed's order;
// first_divergence and generated_at follow them.
type diffLine struct {
	Type            string          `json:"type"`
	OriginalSession string          `json:"original_session"`
	ReplaySession   string          `json:"replay_session"`
	Mutations       []string        `json:"mutations"`
	Metrics         lineMetrics     `json:"metrics"`
	Outcome         DiffOutcome     `json:"outcome"`
	ArtifactDiff    *lineArtifact   `json:"artifact_diff"`
	FirstDivergence *lineDivergence `json:"first_divergence,omitempty"`
	GeneratedAt     string          `json:"generated_at,omitempty"`
	// OriginalFinalSHA is the original run's final commit (the crashed tip) and
	// ReplayFinalSHA the replay's, both taken when the replay ran.
	OriginalFinalSHA string      `json:"original_final_sha,omitempty"`
	ReplayFinalSHA   string      `json:"replay_final_sha,omitempty"`
	Reuse            *ReuseScore `json:"reuse,omitempty"`
}

// DiffRecord is what a replay-diff.jsonl line recorded about one comparison: the
// sessions, the mutations, the final commits compared and the artifact numbers.
type DiffRecord struct {
	OriginalSession  string
	ReplaySession    string
	Mutations        []string
	OriginalFinalSHA string
	ReplayFinalSHA   string
	// Artifact is nil when the line had no artifact diff.
	Artifact *ArtifactDiff
}

// ParseDiffLine reads one replay-diff.jsonl line; an error for a line that is not a
// replay-diff record.
func ParseDiffLine(line []byte) (*DiffRecord, error) {
	var l diffLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("not a JSON record: %w", err)
	}
	if l.Type != "replay-diff" {
		return nil, fmt.Errorf("type %q is not replay-diff", l.Type)
	}
	r := &DiffRecord{OriginalSession: l.OriginalSession, ReplaySession: l.ReplaySession, Mutations: l.Mutations,
		OriginalFinalSHA: l.OriginalFinalSHA, ReplayFinalSHA: l.ReplayFinalSHA}
	if a := l.ArtifactDiff; a != nil {
		r.Artifact = &ArtifactDiff{From: l.OriginalFinalSHA, To: l.ReplayFinalSHA, FilesChanged: a.FilesChanged, Insertions: a.Insertions, Deletions: a.Deletions}
	}
	return r, nil
}

type lineMetrics struct {
	OriginalDispatches int  `json:"original_dispatches"`
	ReplayedDispatches int  `json:"replayed_dispatches"`
	OriginalGateRounds int  `json:"original_gate_rounds"`
	ReplayedGateRounds int  `json:"replayed_gate_rounds"`
	OriginalDurationM  *int `json:"original_duration_m"`
	ReplayedDurationM  *int `json:"replayed_duration_m"`
}

type lineArtifact struct {
	FilesChanged int `json:"files_changed"`
	Insertions   int `json:"insertions"`
	Deletions    int `json:"deletions"`
}

type lineDivergence struct {
	OriginalSeq int    `json:"original_seq,omitempty"`
	ReplayedSeq int    `json:"replayed_seq,omitempty"`
	Role        string `json:"role"`
	Reason      string `json:"reason"`
	Downstream  []int  `json:"downstream"`
}

// DiffJSONLine renders d as one compact JSON line (no trailing newline) of the
// replay specification: type, original_session, replay_session, mutations,
// metrics, outcome and artifact_diff (null when unknown), then first_divergence
// (when there is one) and generated_at (when set).
func DiffJSONLine(d *ReplayDiff) ([]byte, error) {
	l := diffLine{
		Type: "replay-diff", OriginalSession: d.OriginalSession, ReplaySession: d.ReplaySession,
		Mutations: append([]string{}, d.Mutations...),
		Metrics: lineMetrics{
			OriginalDispatches: d.Metrics.OriginalDispatches, ReplayedDispatches: d.Metrics.ReplayedDispatches,
			OriginalGateRounds: d.Metrics.OriginalGateRounds, ReplayedGateRounds: d.Metrics.ReplayedGateRounds,
			OriginalDurationM: d.Metrics.OriginalDurationM, ReplayedDurationM: d.Metrics.ReplayedDurationM,
		},
		Outcome: d.Outcome,
	}
	if a := d.ArtifactDiff; a != nil {
		l.ArtifactDiff = &lineArtifact{FilesChanged: a.FilesChanged, Insertions: a.Insertions, Deletions: a.Deletions}
	}
	if dv := d.FirstDivergence; dv != nil {
		ld := &lineDivergence{OriginalSeq: dv.OriginalSeq, ReplayedSeq: dv.ReplayedSeq, Role: dv.Role, Reason: dv.Reason, Downstream: []int{}}
		for _, ds := range dv.Downstream {
			ld.Downstream = append(ld.Downstream, ds.Seq)
		}
		l.FirstDivergence = ld
	}
	if !d.Generated.IsZero() {
		l.GeneratedAt = d.Generated.UTC().Format(time.RFC3339)
	}
	l.OriginalFinalSHA, l.ReplayFinalSHA = d.OriginalFinalSHA, d.ReplayFinalSHA
	l.Reuse = d.Reuse.unservedOnly()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("replay diff line: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AppendDiffJSONL appends line (a newline is added when missing) to the JSONL file at
// path, created when missing: with O_APPEND, under an exclusive advisory lock, in a
// single write, then fsync'd. A torn last line without newline is ended first so the
// new line stands on its own. line must be a single line.
func AppendDiffJSONL(path string, line []byte) error {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) == 0 || bytes.ContainsAny(line, "\n\r") {
		return fmt.Errorf("%s: refusing to append an empty or multi-line record", path)
	}
	return safewrite.AppendLine(path, line)
}
