package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ip(n int) *int         { return &n }
func fp(f float64) *float64 { return &f }
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./report -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

// fullDiff is a replay of the reference pipeline from wave 1 with a stricter
// reviewer: task 1's review fails, a fix round follows.
func fullDiff() *ReplayDiff {
	return &ReplayDiff{
		OriginalSession: "1775430161",
		ReplaySession:   "r1775441000",
		Generated:       time.Date(2026, 4, 6, 2, 2, 41, 0, time.UTC),
		Mutations:       []string{"build-reviewer-prompt.md -> stricter.md"},
		Metrics: DiffMetrics{OriginalDispatches: 19, ReplayedDispatches: 21, OriginalGateRounds: 3, ReplayedGateRounds: 3,
			OriginalDurationM: ip(143), ReplayedDurationM: ip(171), Reexecuted: 9, ReplayEntries: 11},
		Outcome:   DiffOutcome{Original: "PASS", Replayed: "FAIL"},
		ResumeSeq: 11,
		Phases: []PhaseCounts{
			{Phase: "1", Name: "Design", OriginalDispatches: 4, ReplayedDispatches: 4, OriginalGateRounds: 2, ReplayedGateRounds: 2},
			{Phase: "3", Name: "Execute", OriginalDispatches: 9, ReplayedDispatches: 11},
		},
		Dispatches: []DispatchComparison{
			{OriginalSeq: 11, ReplayedSeq: 20, Role: "build-implementer", Phase: "3", Task: "1", OriginalStatus: "completed", ReplayedStatus: "completed",
				OriginalDurationS: fp(900), ReplayedDurationS: fp(880), OriginalSummary: "Task 1 done", ReplayedSummary: "Task 1 done", SummaryDelta: "same"},
			{OriginalSeq: 15, ReplayedSeq: 24, Role: "build-reviewer", Phase: "3", Task: "1", OriginalStatus: "completed", ReplayedStatus: "failed",
				OriginalDurationS: fp(200), ReplayedDurationS: fp(260), OriginalSummary: "Task 1 PASS: no blocking findings",
				ReplayedSummary: "Task 1 FAIL: 2 blocking findings | validators unchecked", SummaryDelta: "changed: Task 1 FAIL: 2 blocking findings | validators unchecked",
				Mutation: "build-reviewer-prompt.md -> stricter.md"},
			{OriginalSeq: 19, Role: "build-implementer", Phase: "3", Task: "3", OriginalStatus: "error", OriginalDurationS: fp(600), SummaryDelta: "not re-run"},
			{ReplayedSeq: 30, Role: "build-implementer", Phase: "3", Task: "1", ReplayedStatus: "completed", ReplayedDurationS: fp(400), SummaryDelta: "new: Task 1 fix round"},
		},
		FirstDivergence: &Divergence{
			DispatchComparison: DispatchComparison{OriginalSeq: 15, ReplayedSeq: 24, Role: "build-reviewer", Phase: "3", Task: "1",
				OriginalStatus: "completed", ReplayedStatus: "failed", OriginalSummary: "Task 1 PASS: no blocking findings",
				ReplayedSummary: "Task 1 FAIL: 2 blocking findings\nvalidators unchecked"},
			Reason:     "status",
			Downstream: []DownstreamDispatch{{Seq: 16, Role: "build-reviewer", Phase: "3", Task: "2"}, {Seq: 17, Role: "adversarial-tester", Phase: "3", Task: "1"}},
		},
		ArtifactDiff: &ArtifactDiff{From: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", To: "9f1c3a7e2b4d6f8091a2b3c4d5e6f708192a3b4c", FilesChanged: 3, Insertions: 42, Deletions: 7},
	}
}

// minimalDiff has no mutations, no divergence, unknown times and no artifact diff.
func minimalDiff() *ReplayDiff {
	return &ReplayDiff{
		OriginalSession: "s1", ReplaySession: "r2",
		Metrics:   DiffMetrics{OriginalDispatches: 2, ReplayedDispatches: 2, OriginalDurationM: ip(45), Reexecuted: 1, ReplayEntries: 1},
		Outcome:   DiffOutcome{Original: "UNKNOWN", Replayed: "UNKNOWN"},
		ResumeSeq: 2,
		Dispatches: []DispatchComparison{{OriginalSeq: 2, ReplayedSeq: 3, Role: "cleanup", OriginalStatus: "completed", ReplayedStatus: "completed",
			SummaryDelta: "same"}},
		ArtifactDiff: &ArtifactDiff{From: "a", To: "b", FilesChanged: 1, Insertions: 0, Deletions: 0},
	}
}

func TestWriteDiffMarkdownGolden(t *testing.T) {
	tests := []struct {
		name string
		d    *ReplayDiff
	}{
		{"diff_full", fullDiff()},
		{"diff_minimal", minimalDiff()},
		{"diff_empty", &ReplayDiff{OriginalSession: "s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var md bytes.Buffer
			require.NoError(t, WriteDiffMarkdown(&md, tt.d))
			golden(t, tt.name+".golden.md", md.Bytes())
			line, err := DiffJSONLine(tt.d)
			require.NoError(t, err)
			golden(t, tt.name+".golden.jsonl", append(line, '\n'))
		})
	}
}

func TestDiffMarkdownSections(t *testing.T) {
	var md bytes.Buffer
	require.NoError(t, WriteDiffMarkdown(&md, fullDiff()))
	out := md.String()
	last := -1
	for _, want := range []string{
		"# Replay Diff: 1775430161 vs r1775441000\n",
		"## Template Mutations\n- build-reviewer-prompt.md -> stricter.md\n",
		"## Outcome Comparison\n",
		"| Metric", "| Total dispatches ", "| Quality gate rounds ", "| Wall clock from the resume point ", "2h 23m", "2h 51m", "+28m", "| Acceptance tests ", "changed",
		"## Per-Dispatch Comparison\n", "| Seq ", "| Role ", "| Original Status ", "| Replayed Status ", "| Summary Delta ",
		"## First Divergence\n",
		"## Artifact Diff\n- git diff 4b825dc642cb6eb9a060e54bf8d69288fbee4904..9f1c3a7e2b4d6f8091a2b3c4d5e6f708192a3b4c\n  3 files changed, +42/-7 lines\n",
	} {
		i := strings.Index(out, want)
		require.GreaterOrEqual(t, i, 0, "missing %q in\n%s", want, out)
		assert.Greater(t, i, last, "%q out of order", want)
		last = i
	}
	assert.Contains(t, out, `Task 1 [-PASS: no blocking findings-] {+FAIL: 2 blocking findings \| validators unchecked+}`, "the change in its context, a | in a cell escaped")
}

func TestDiffJSONLineFieldOrder(t *testing.T) {
	line, err := DiffJSONLine(fullDiff())
	require.NoError(t, err)
	assert.NotContains(t, string(line), "\n")
	require.True(t, json.Valid(line))
	s := string(line)
	last := -1
	for _, key := range []string{`{"type":"replay-diff"`, `"original_session":`, `"replay_session":`, `"mutations":`, `"metrics":{"original_dispatches":`,
		`"replayed_dispatches":`, `"original_gate_rounds":`, `"replayed_gate_rounds":`, `"original_duration_m":`, `"replayed_duration_m":`,
		`"outcome":{"original":`, `"replayed":`, `"artifact_diff":{"files_changed":`, `"insertions":`, `"deletions":`, `"first_divergence":`, `"generated_at":`} {
		i := strings.Index(s, key)
		require.GreaterOrEqual(t, i, 0, "missing %s in %s", key, s)
		assert.Greater(t, i, last, "%s out of order in %s", key, s)
		last = i
	}
	assert.Contains(t, s, `"mutations":["build-reviewer-prompt.md -> stricter.md"]`, "> is not escaped")

	empty, err := DiffJSONLine(&ReplayDiff{})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"replay-diff","original_session":"","replay_session":"","mutations":[],"metrics":{"original_dispatches":0,"replayed_dispatches":0,"original_gate_rounds":0,"replayed_gate_rounds":0,"original_duration_m":null,"replayed_duration_m":null},"outcome":{"original":"","replayed":""},"artifact_diff":null}`, string(empty))
}

func TestAppendDiffJSONL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "replay-diff.jsonl")
	require.NoError(t, AppendDiffJSONL(path, []byte(`{"a":1}`)))
	require.NoError(t, AppendDiffJSONL(path, []byte("{\"a\":2}\n")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n{\"a\":2}\n", string(got))

	torn := filepath.Join(dir, "torn.jsonl")
	require.NoError(t, os.WriteFile(torn, []byte(`{"a":1}`+"\n"+`{"a":`), 0o644))
	require.NoError(t, AppendDiffJSONL(torn, []byte(`{"b":2}`)))
	got, err = os.ReadFile(torn)
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n{\"a\":\n{\"b\":2}\n", string(got))

	for _, bad := range []string{"", "\n", "a\nb", "a\rb"} {
		assert.Error(t, AppendDiffJSONL(path, []byte(bad)), "%q", bad)
	}
	assert.Error(t, AppendDiffJSONL(filepath.Join(dir, "no", "such", "dir.jsonl"), []byte("x")))
}

func TestAppendDiffJSONLConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replay-diff.jsonl")
	const writers, each = 8, 25
	line := strings.Repeat("x", 3000)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				assert.NoError(t, AppendDiffJSONL(path, []byte(fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, line))))
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, writers*each)
	for _, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "torn line %.60q", l)
	}
}

func TestParseDiffLineRoundTrip(t *testing.T) {
	d := &ReplayDiff{OriginalSession: "1", ReplaySession: "2", Mutations: []string{"a.md -> b.md"},
		ArtifactDiff: &ArtifactDiff{From: "aa", To: "bb", FilesChanged: 3, Insertions: 4, Deletions: 5}, OriginalFinalSHA: "aa", ReplayFinalSHA: "bb"}
	line, err := DiffJSONLine(d)
	require.NoError(t, err)
	r, err := ParseDiffLine(line)
	require.NoError(t, err)
	assert.Equal(t, &DiffRecord{OriginalSession: "1", ReplaySession: "2", Mutations: []string{"a.md -> b.md"}, OriginalFinalSHA: "aa", ReplayFinalSHA: "bb",
		Artifact: &ArtifactDiff{From: "aa", To: "bb", FilesChanged: 3, Insertions: 4, Deletions: 5}}, r)
	_, err = ParseDiffLine([]byte(`{"type":"other"}`))
	assert.ErrorContains(t, err, "not replay-diff")
	_, err = ParseDiffLine([]byte(`{"type":`))
	assert.Error(t, err)
}

func FuzzParseDiffLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"replay-diff","original_session":"1","replay_session":"2","mutations":["a -> b"],"metrics":{},"outcome":{},"artifact_diff":{"files_changed":1,"insertions":2,"deletions":3},"original_final_sha":"aa","replay_final_sha":"bb"}`,
		`{"type":"replay-diff","artifact_diff":null}`, `{"type":"other"}`, "", "{", "null", `{"type":"replay-diff","mutations":{"x":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseDiffLine(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if r == nil {
			t.Fatal("no record and no error")
		}
		if r.Artifact != nil && (r.Artifact.From != r.OriginalFinalSHA || r.Artifact.To != r.ReplayFinalSHA) {
			t.Fatalf("artifact endpoints %q..%q differ from the recorded shas", r.Artifact.From, r.Artifact.To)
		}
	})
}
