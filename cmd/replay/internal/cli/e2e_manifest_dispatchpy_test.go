package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests replay, through the binary, the call sequences of the test cases of
// Crucible's scripts/dispatch.py (and the rules its later version added), with the
// bytes that script prints and writes. In the strings, {D} is the dispatch dir
// (crucible-dispatch-123 in the working directory {W}) and {S} the scratch dir.

// scriptStep is one call of `replay manifest` and what the script answers to it.
type scriptStep struct {
	args []string
	code int
	out  string
	err  string
}

// dispatchedLine is the line `before` writes for 1-plan-writer.md as seq 1.
const dispatchedLine = `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","tool_calls":null}`

var beforeSeq1 = scriptStep{
	args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "plan-writer", "--model-tier", "opus"},
	out:  "dispatched seq 1 (1-plan-writer.md, 124 chars)\n",
}

var afterSeq1 = scriptStep{
	args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed"},
	out:  "completed seq 1 (1-plan-writer.md)\n",
}

const noDispatched = "dispatch after: no dispatched entry for seq %s — refusing to fabricate a completion record\n"

// dispatchPyCase is one call sequence of the script's tests.
type dispatchPyCase struct {
	name     string
	setup    map[string]string // files to write under {W} before the steps
	steps    []scriptStep
	manifest []string // the manifest lines afterwards; nil: not checked
	none     bool     // no manifest exists afterwards
	gone     bool     // the dispatch dir is removed afterwards
	exist    []string // paths that exist afterwards
	// check, when set, looks at the manifest's lines afterwards.
	check func(t *testing.T, lines []string)
}

// dispatchPyCases are the call sequences, with what the script prints and writes.
var dispatchPyCases = []dispatchPyCase{
	// The script's own test answers 1 here, though its setup wrote 1-plan-writer.md:
	// replay never hands out a seq whose dispatch file is on disk (README table).
	{name: "seq on a dispatch dir with no manifest", steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, out: "2\n"}}, none: true},
	{name: "seq on a missing dir", steps: []scriptStep{{args: []string{"seq", "--dir", "{W}/nope"}, out: "1\n"}}},
	{name: "before and after", steps: []scriptStep{beforeSeq1, afterSeq1},
		manifest: []string{dispatchedLine, `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"completed","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":null}`}},
	{name: "seq recovery after entries", steps: []scriptStep{beforeSeq1, afterSeq1, {args: []string{"seq", "--dir", "{D}"}, out: "2\n"}}},
	{name: "after with an invalid status", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "dispatched"}, code: 2,
			err: "dispatch after: status must be one of ['completed', 'error', 'failed', 'replayed', 'skipped']\n"}},
		manifest: []string{dispatchedLine}},
	{name: "before with a missing file records null", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "/nonexistent", "--role", "r", "--model-tier", "opus"},
			out: "dispatched seq 1 (nonexistent, None chars)\n",
			err: "[dispatch WARN] cannot read dispatch file /nonexistent: [Errno 2] No such file or directory: '/nonexistent'; input_chars set to null\n"}},
		manifest: []string{`{"seq":1,"file":"nonexistent","role":"r","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":"opus","model_profile":"high","tool_calls":null}`}},
	{name: "before with a file that is not UTF-8", setup: map[string]string{"crucible-dispatch-123/2-x.md": "ok\xff"}, steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "2", "--file", "crucible-dispatch-123/2-x.md", "--role", "r", "--phase", "3", "--task", "4", "--model-tier", "haiku"},
			out: "dispatched seq 2 (2-x.md, None chars)\n",
			err: "[dispatch WARN] cannot read dispatch file crucible-dispatch-123/2-x.md: 'utf-8' codec can't decode byte 0xff in position 2: invalid start byte; input_chars set to null\n"}},
		manifest: []string{`{"seq":2,"file":"2-x.md","role":"r","phase":"3","task":4,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":"haiku","model_profile":"low","tool_calls":null}`}},
	{name: "before with a label of a newer Crucible", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "1", "--file", "{D}/1-plan-writer.md", "--role", "r", "--model-tier", "fable"},
			out: "dispatched seq 1 (1-plan-writer.md, 124 chars)\n"}},
		manifest: []string{`{"seq":1,"file":"1-plan-writer.md","role":"r","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"fable","model_profile":null,"tool_calls":null}`}},
	{name: "summary cut to fit the atomic write", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--summary", strings.Repeat("s", 8000)}, out: "completed seq 1 (1-plan-writer.md)\n"}},
		manifest: []string{dispatchedLine, `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"completed","duration_s":null,"summary":"` + strings.Repeat("s", 3883-len(`"model_profile":"high","actual_model":null,`)) + `...","input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":null}`}},
	{name: "escaping like json.dumps", steps: []scriptStep{
		{args: []string{"before", "--dir", "{D}", "--seq", "2", "--file", "{D}/1-plan-writer.md", "--role", "red-team", "--phase", "3", "--task", "7", "--model-tier", "haiku"}, out: "dispatched seq 2 (1-plan-writer.md, 124 chars)\n"},
		{args: []string{"after", "--dir", "{D}", "--seq", "2", "--status", "failed", "--summary", "tab\there\nnew \b\f\x7f \u2028 é 日 \"q\" \\", "--duration", "42", "--output-chars", "900", "--tool-calls", "3"}, out: "failed seq 2 (1-plan-writer.md)\n"}},
		manifest: []string{`{"seq":2,"file":"1-plan-writer.md","role":"red-team","phase":"3","task":7,"status":"dispatched","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"haiku","model_profile":"low","tool_calls":null}`,
			`{"seq":2,"file":"1-plan-writer.md","role":"red-team","phase":"3","task":7,"status":"failed","duration_s":42,"summary":"tab\there\nnew \b\f` + "\x7f \u2028" + ` é 日 \"q\" \\","input_chars":124,"output_chars":900,"model_tier":"haiku","model_profile":"low","actual_model":null,"tool_calls":3}`}},
	{name: "after without a dispatched entry", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "2", "--status", "completed"}, code: 1, err: strings.Replace(noDispatched, "%s", "2", 1)},
		{args: []string{"after", "--dir", "{W}/nope", "--seq", "1", "--status", "completed"}, code: 1, err: strings.Replace(noDispatched, "%s", "1", 1)}},
		manifest: []string{dispatchedLine}},
	{name: "seq allocates across an interior corrupt line whose seq it reads, tolerates a torn last one",
		setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": dispatchedLine + "\n{\"seq\":2,\"fi\n" + dispatchedLine + "\n"},
		steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, out: "3\n",
			err: "warning: {D}/manifest.jsonl: line 2 is corrupt; it names seq 2, so the next free seq is still known (run 'replay manifest repair --dir {D}' so that Crucible's own dispatch.py allocates again)\n"}},
		manifest: []string{dispatchedLine, `{"seq":2,"fi`, dispatchedLine}},
	{name: "seq refuses across an interior corrupt line with no seq in it",
		setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": dispatchedLine + "\n{\"s\n" + dispatchedLine + "\n"},
		steps: []scriptStep{{args: []string{"seq", "--dir", "{D}"}, code: 1,
			err: "dispatch seq: 1 interior corrupt line(s) in manifest.jsonl — seq recovery unsafe, refusing to allocate (line 2 names no seq; run 'replay manifest repair --dir {D}' to move it to a sidecar)\n"}},
		manifest: []string{dispatchedLine, `{"s`, dispatchedLine}},
	{name: "integer arguments are Python integers", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "completed", "--duration", "1.5"}, code: 2},
		{args: []string{"after", "--dir", "{D}", "--seq", " +1 ", "--status", "skipped", "--duration", "1_0"}, out: "skipped seq 1 (1-plan-writer.md)\n"}},
		manifest: []string{dispatchedLine, `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"skipped","duration_s":10,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":null}`}},
	{name: "cleanup refuses without the receipt ledger", steps: []scriptStep{beforeSeq1, afterSeq1,
		{args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}"}, code: 1,
			err: "dispatch cleanup: both manifest.jsonl and receipt-ledger.jsonl must exist before deleting the dispatch dir (refusing)\n"}},
		exist: []string{"{D}/1-plan-writer.md"}},
	{name: "cleanup after success", setup: map[string]string{"crucible-dispatch-123/receipt-ledger.jsonl": "{}\n"},
		steps: []scriptStep{beforeSeq1, afterSeq1,
			{args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}"}, out: "copied manifest.jsonl + receipt-ledger.jsonl to {S}/crucible-dispatch-123; deleted {D}\n"},
			{args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}"}, code: 1, err: "dispatch cleanup: dispatch dir missing: {D}\n"}},
		gone: true, exist: []string{"{S}/crucible-dispatch-123/manifest.jsonl", "{S}/crucible-dispatch-123/receipt-ledger.jsonl",
			"{S}/crucible-dispatch-123/1-plan-writer.md"}}, // kept too, unlike the script (README table)
	{name: "cleanup --failed copies the dir and keeps it", setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": "{}\n"},
		steps:    []scriptStep{{args: []string{"cleanup", "--dir", "{D}", "--scratch", "{S}", "--failed"}, out: "copied dispatch dir to {S}/crucible-dispatch-123 (left /tmp in place)\n"}},
		manifest: []string{"{}"}, exist: []string{"{S}/crucible-dispatch-123/1-plan-writer.md", "{S}/crucible-dispatch-123/manifest.jsonl"}},
	{name: "cleanup accepts any directory name", setup: map[string]string{"my run/manifest.jsonl": "{}\n", "my run/receipt-ledger.jsonl": "{}\n"},
		steps: []scriptStep{{args: []string{"cleanup", "--dir", "{W}/my run/", "--scratch", "{S}/"}, out: "copied manifest.jsonl + receipt-ledger.jsonl to {S}/my run; deleted {W}/my run/\n"}},
		exist: []string{"{S}/my run/receipt-ledger.jsonl"}},
	// The hand-written line has no model_profile: the manifest follows the older
	// convention, and so does the completion line.
	{name: "after copies a hand-written dispatched line as the script does",
		setup: map[string]string{"crucible-dispatch-123/manifest.jsonl": `{"seq":1.0,"role":"r","phase":3,"task":"2","status":"dispatched","input_chars":1e16,"model_tier":null}` + "\n"},
		steps: []scriptStep{{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "error"}, out: "error seq 1 (None)\n"}},
		manifest: []string{`{"seq":1.0,"role":"r","phase":3,"task":"2","status":"dispatched","input_chars":1e16,"model_tier":null}`,
			`{"seq":1,"file":null,"role":"r","phase":3,"task":"2","status":"error","duration_s":null,"summary":null,"input_chars":1e+16,"output_chars":null,"model_tier":null,"tool_calls":null}`}},
	{name: "replayed is a status", steps: []scriptStep{beforeSeq1,
		{args: []string{"after", "--dir", "{D}", "--seq", "1", "--status", "replayed"}, out: "replayed seq 1 (1-plan-writer.md)\n"}},
		manifest: []string{dispatchedLine, `{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":null,"task":null,"status":"replayed","duration_s":null,"summary":null,"input_chars":124,"output_chars":null,"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":null}`}},
}

func TestManifestLikeDispatchPy(t *testing.T) {
	t.Parallel()
	runDispatchPyCases(t, dispatchPyCases)
}

// runDispatchPyCases runs each case's steps through the CLI in a sandbox of its own.
func runDispatchPyCases(t *testing.T, cases []dispatchPyCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewSandbox(t)
			w := s.Root
			d := filepath.Join(w, "crucible-dispatch-123")
			expand := strings.NewReplacer("{W}", w, "{D}", d, "{S}", filepath.Join(w, "scratch")).Replace
			writeAt(t, mkdirAll(t, d), "1-plan-writer.md", "# Dispatch: plan-writer\n"+strings.Repeat("x", 100))
			for name, content := range tt.setup {
				writeAt(t, mkdirAll(t, filepath.Dir(filepath.Join(w, name))), filepath.Base(name), content)
			}
			for i, st := range tt.steps {
				args := []string{"manifest"}
				for _, a := range st.args {
					args = append(args, expand(a))
				}
				r := s.Run(t, w, args...)
				assert.Equal(t, st.code, r.Code, "step %d: %v\n%s", i+1, st.args, r.Stderr)
				assert.Equal(t, expand(st.out), r.Stdout, "step %d stdout", i+1)
				if st.code == 2 && st.err == "" {
					assert.Contains(t, r.Stderr, "invalid int value", "step %d stderr", i+1)
				} else {
					assert.Equal(t, expand(st.err), r.Stderr, "step %d stderr", i+1)
				}
			}
			data, err := os.ReadFile(filepath.Join(d, "manifest.jsonl"))
			switch {
			case tt.gone:
				assert.NoDirExists(t, d)
			case tt.none:
				assert.ErrorIs(t, err, os.ErrNotExist, "no manifest written")
			case tt.manifest != nil:
				require.NoError(t, err)
				assert.Equal(t, strings.Join(tt.manifest, "\n")+"\n", string(data))
			}
			for _, p := range tt.exist {
				assert.FileExists(t, expand(p))
			}
			if tt.check != nil {
				require.NoError(t, err)
				tt.check(t, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"))
			}
		})
	}
}

func mkdirAll(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// TestManifestCleanupRefusesPlantedSymlink plants the durable copy's place in the
// scratch dir as a symlink to another directory: cleanup refuses with one line,
// writes nothing there and keeps the live dir. Without the symlink it works.
func TestManifestCleanupRefusesPlantedSymlink(t *testing.T) {
	t.Parallel()
	for _, planted := range []bool{true, false} {
		s := NewSandbox(t)
		d := mkDispatchDir(t, s)
		writeAt(t, d, "manifest.jsonl", dispatchedLine+"\n")
		writeAt(t, d, "receipt-ledger.jsonl", "{}\n")
		scratch := mkdirAll(t, filepath.Join(s.Home, "scratch"))
		target := mkdirAll(t, filepath.Join(s.Root, "elsewhere"))
		dest := filepath.Join(scratch, filepath.Base(d))
		if planted {
			require.NoError(t, os.Symlink(target, dest))
		}
		for _, failed := range []bool{true, false} {
			args := []string{"manifest", "cleanup", "--dir", d, "--scratch", scratch}
			if failed {
				args = append(args, "--failed")
			}
			r := s.Run(t, "", args...)
			if !planted {
				require.Equal(t, 0, r.Code, r.Stderr)
				continue
			}
			assert.Equal(t, 1, r.Code, "failed=%v", failed)
			assert.Equal(t, "replay: "+dest+" is a symlink; refusing to write the durable copy through it (remove it and run cleanup again)\n", r.Stderr)
			assert.Empty(t, r.Stdout)
			assert.DirExists(t, d, "the live dir is kept")
			entries, err := os.ReadDir(target)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written through the symlink")
		}
		if !planted {
			assert.FileExists(t, filepath.Join(dest, "receipt-ledger.jsonl"))
			assert.NoDirExists(t, d)
		}
	}
}
