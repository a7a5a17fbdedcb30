package cli_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// These cases replay, through the binary, the test cases of Crucible's
// scripts/test_dispatch.py at commit 31fd5ec, whose dispatch.py writes the older
// convention: no model_profile, no actual_model, model tiers opus, sonnet and
// haiku only. Each case runs twice: on a fresh dispatch dir with --convention
// older, and with the convention detected from a manifest whose first line is
// the older script's (seq 9 of another dispatch, which the cases never touch).
// Of the script's 13 tests, 12 behave as there; test_seq_empty differs on
// purpose: replay never hands out a seq whose dispatch file is on disk.

// olderFirstLine is a line the older script wrote: it makes a manifest older.
const olderFirstLine = `{"seq":9,"file":"9-red-team.md","role":"red-team","phase":"2","task":null,"status":"completed","duration_s":60,"summary":"ok","input_chars":10,"output_chars":20,"model_tier":"sonnet","tool_calls":3}`

// olderDispatched and olderCompleted are the lines before and after write for
// 1-plan-writer.md as seq 1, byte for byte as the older script writes them.
const (
	olderDispatched = `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","tool_calls":null}`
	olderCompleted  = `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"completed","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","tool_calls":null}`
)

// olderCases are the 31fd5ec test cases; seq answers assume a fresh dir (the
// detected run adds 9 to the manifest, see olderDetected).
var olderCases = []dispatchPyCase{
	{name: "test_seq_empty (replay: 2, the dispatch file 1-plan-writer.md is on disk)", steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, out: "2\n"}}},
	{name: "test_before_and_after", steps: []scriptStep{beforeSeq1, afterSeq1}, manifest: []string{olderDispatched, olderCompleted}},
	{name: "test_seq_recovery_after_entries", steps: []scriptStep{beforeSeq1, afterSeq1, {args: []string{"seq", "--dir", "{D}"}, out: "2\n"}}},
	{name: "test_after_invalid_status", steps: []scriptStep{{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "dispatched"}, code: 2,
		err: "dispatch after: status must be one of ['completed', 'error', 'failed', 'replayed', 'skipped']\n"}}},
	{name: "test_before_missing_file_writes_null_input_chars", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "/nonexistent", "--role", "r", "--model-tier", "opus"},
			out: "dispatched seq 1 (nonexistent, None chars)\n",
			err: "[dispatch WARN] cannot read dispatch file /nonexistent: [Errno 2] No such file or directory: '/nonexistent'; input_chars set to null\n"}},
		manifest: []string{`{"seq":1,"file":"nonexistent","role":"r","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":"opus","tool_calls":null}`}},
	{name: "test_before_invalid_tier", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "r", "--model-tier", "fable"}, code: 2,
			err: "dispatch before: model-tier must be one of ['haiku', 'opus', 'sonnet']\n"}}, none: true},
	{name: "test_summary_pipebuf_truncation", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--summary", strings.Repeat("s", 8000)}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		check: func(t *testing.T, lines []string) {
			last := lines[len(lines)-1]
			assert.LessOrEqual(t, len(last)+1, 4096)
			assert.NotContains(t, last, "model_profile")
			assert.NotContains(t, last, "actual_model")
		}},
	{name: "test_summary_pipebuf_unicode_bytes", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--summary", strings.Repeat("\u00e9", 8000)}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		check: func(t *testing.T, lines []string) { assert.LessOrEqual(t, len(lines[len(lines)-1])+1, 4096) }},
	{name: "test_cleanup_success_copies_and_deletes", setup: map[string]string{"crucible-dispatch-123/receipt-ledger.jsonl": "{}\n"},
		steps: []scriptStep{beforeSeq1, afterSeq1, {args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}"},
			out: "copied manifest.jsonl + receipt-ledger.jsonl to {S}/crucible-dispatch-123; deleted {D}\n"}},
		gone: true, exist: []string{"{S}/crucible-dispatch-123/manifest.jsonl", "{S}/crucible-dispatch-123/receipt-ledger.jsonl"}},
	{name: "test_seq_refuses_on_interior_corruption", setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": "{\"seq\":1,\"x\":0}\n{corrupt interior line}\n{\"seq\":2,\"x\":0}\n"},
		steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, code: 1,
			err: "dispatch seq: 1 interior corrupt line(s) in manifest.jsonl — seq recovery unsafe, refusing to allocate (line 2 names no seq; run 'replay manifest repair --dir {D}' to move it to a sidecar)\n"}}},
	{name: "test_after_refuses_without_dispatched_entry", steps: []scriptStep{{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed"}, code: 1,
		err: strings.Replace(noDispatched, "%s", "1", 1)}}},
	{name: "test_cleanup_refuses_missing_ledger", steps: []scriptStep{beforeSeq1, afterSeq1, {args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}"}, code: 1,
		err: "dispatch cleanup: both manifest.jsonl and receipt-ledger.jsonl must exist before deleting the dispatch dir (refusing)\n"}},
		exist: []string{"{D}/manifest.jsonl"}},
	{name: "test_cleanup_failed_copies_dir", setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": "{}\n"},
		steps: []scriptStep{{args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}", "--failed"}, out: "copied dispatch dir to {S}/crucible-dispatch-123 (left /tmp in place)\n"}},
		exist: []string{"{D}/manifest.jsonl", "{S}/crucible-dispatch-123/manifest.jsonl"}},
}

// withConventionOlder gives every before and after of the cases --convention older.
func withConventionOlder(cases []dispatchPyCase) []dispatchPyCase {
	out := make([]dispatchPyCase, 0, len(cases))
	for _, c := range cases {
		c.name += " (--convention older)"
		steps := make([]scriptStep, len(c.steps))
		for i, st := range c.steps {
			if st.args[0] == "before" || st.args[0] == "after" {
				st.args = append(append([]string(nil), st.args...), "--convention", "older")
			}
			steps[i] = st
		}
		c.steps = steps
		out = append(out, c)
	}
	return out
}

// olderDetected runs the cases that append on a manifest that starts with the
// older script's line: the convention is detected, the lines are the same.
func olderDetected(cases []dispatchPyCase) []dispatchPyCase {
	var out []dispatchPyCase
	for _, c := range cases {
		if c.setup != nil || c.check != nil || slices.ContainsFunc(c.steps, func(st scriptStep) bool { return st.args[0] == "seq" || st.args[0] == "cleanup" }) {
			continue
		}
		c.name += " (detected)"
		c.setup = map[string]string{"crucible-dispatch-123/manifest.jsonl": olderFirstLine + "\n"}
		if c.none {
			c.none, c.manifest = false, []string{olderFirstLine}
		} else if c.manifest != nil {
			c.manifest = append([]string{olderFirstLine}, c.manifest...)
		}
		out = append(out, c)
	}
	return out
}

func TestManifestLikeOlderDispatchPy(t *testing.T) {
	t.Parallel()
	assert.Len(t, olderCases, 13, "one case per test of test_dispatch.py at 31fd5ec")
	runDispatchPyCases(t, withConventionOlder(olderCases))
	detected := olderDetected(olderCases)
	assert.Len(t, detected, 5, "before/after, invalid status, missing file, invalid tier, after without dispatched")
	runDispatchPyCases(t, detected)
}

// TestConventionFollowsTheManifest: a newer manifest gets newer lines even when
// a label the older script refuses is given, and --convention newer on an older
// manifest writes the newer format.
func TestConventionFollowsTheManifest(t *testing.T) {
	t.Parallel()
	newerFirst := `{"seq":9,"file":"9-red-team.md","role":"red-team","phase":"2","task":null,"status":"completed","duration_s":60,"summary":"ok","input_chars":10,"output_chars":20,"model_tier":"sonnet","model_profile":"standard","actual_model":null,"tool_calls":3}`
	fable := scriptStep{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "r", "--model-tier", "fable"},
		out: "dispatched seq 1 (1-plan-writer.md, 124 chars)\n"}
	fableLine := `{"seq":1,"file":"1-plan-writer.md","role":"r","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"fable","model_profile":null,"tool_calls":null}`
	forced := fable
	forced.args = append(append([]string(nil), fable.args...), "--convention", "newer")
	runDispatchPyCases(t, []dispatchPyCase{
		{name: "newer manifest", setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": newerFirst + "\n"}, steps: []scriptStep{fable},
			manifest: []string{newerFirst, fableLine}},
		{name: "older manifest, --convention newer", setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": olderFirstLine + "\n"}, steps: []scriptStep{forced},
			manifest: []string{olderFirstLine, fableLine}},
		{name: "a bad --convention", steps: []scriptStep{{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--convention", "oldest"}, code: 2,
			err: "replay: --convention \"oldest\": want auto, older or newer\nRun 'replay manifest after --help' for usage.\n"}}, none: true},
	})
}
