package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var lineSeeds = []string{
	`{"seq":11,"file":"11-build-implementer.md","role":"implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":14210,"output_chars":null,"model_tier":"opus","tool_calls":null}`,
	`{"seq":12,"file":"12-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"completed","duration_s":388,"summary":"Task 2 done, 5 tests","input_chars":13980,"output_chars":4870,"model_tier":"opus","tool_calls":27}`,
	`{"seq":9,"phase":null,"status":"completed","x":{"a":[1,2.5e-3,"s\u00e9",null,true]}}`,
	`{"seq":21,"status":"dispatched","replay_of":19,"replay_session":"1775500000","mutation":"a.md -> b.md"}`,
	`{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"replayed","summary":"a\b\f` + "\x7f\u2028" + `"}`,
	`{"seq":2.0,"phase":4,"task":"3","status":"skipped"}`,
	`{"seq":20,"file":"20-build-rev`,
	`{"seq":"4","status":"completed"}`,
	"\x00\x01binary",
	`[1,2]`,
}

// FuzzParseLine checks the manifest line parser never panics and that what it accepts
// encodes to a line it parses back to the same encoding.
func FuzzParseLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseLine(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		line, err := EncodeLine(e)
		if err != nil {
			if !strings.Contains(err.Error(), "more than the 4096") {
				t.Fatalf("encoding a parsed entry: %v", err)
			}
			return
		}
		if len(line) > MaxLineBytes || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("bad line %q", line)
		}
		back, err := ParseLine(line)
		if err != nil {
			t.Fatalf("re-parsing %q: %v", line, err)
		}
		again, err := EncodeLine(back)
		if err != nil || !bytes.Equal(line, again) {
			t.Fatalf("round trip changed the line:\n%q\n%q (%v)", line, again, err)
		}
	})
}

// FuzzParseMarker checks the marker parser never panics and errs in one line.
func FuzzParseMarker(f *testing.F) {
	for _, s := range []string{
		`{"pipeline_id":"1775430161","skill":"build","phase":3,"start_time":"2026-04-07T09:02:41Z","scratch_dir":"/h/memory","dispatch_dir":"/tmp/crucible-dispatch-1775430161","branch":"feat/login","baseline_sha":"abc123"}`,
		`{"pipeline_id":1775430161,"skill":"build","phase":"2","start_time":"t","scratch_dir":"/s","dispatch_dir":"/d"}`,
		"pipeline: build\nsession-id: 1775430161\nstarted: 2026-04-07T09:02:41Z\ndispatch-dir: /tmp/crucible-dispatch-1775430161/\n",
		"", "{", `{"pipeline_id":{"a":1}}`, "hello world",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMarker(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if m.Shape == "" || (m.PipelineID == "" && m.DispatchDir == "") {
			t.Fatalf("accepted a marker that names no pipeline: %+v", m)
		}
	})
}

// FuzzParseDispatchHeader checks the dispatch header parser never panics and that
// formatting what it parsed is stable.
func FuzzParseDispatchHeader(f *testing.F) {
	for _, s := range []string{
		specDispatch,
		"# Dispatch: plan-writer\r\n**Pipeline:** build | **Phase:** 2 | **Task:** -\r\n**Timestamp:** 2026-04-07 10:00:00\r\n**Dispatch-Dir:** /d\r\n\r\n---\r\nbody",
		"# Dispatch: x\n**Timestamp:** yesterday\n---\n",
		"# Review findings\n", "", "# Dispatch: x\n**Pipeline:** a | b | **Task:** |\n---",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, err := ParseDispatchHeader(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		out := FormatDispatchFile(*h, body)
		h2, body2, err := ParseDispatchHeader(out)
		if err != nil {
			t.Fatalf("re-parsing %q: %v", out, err)
		}
		if !bytes.Equal(body, body2) {
			t.Fatalf("body changed: %q -> %q", body, body2)
		}
		if again := FormatDispatchFile(*h2, body2); !bytes.Equal(out, again) {
			t.Fatalf("format not stable:\n%q\n%q", out, again)
		}
	})
}

// FuzzDecodeError checks the UTF-8 check of dispatch files never panics, flags
// exactly the invalid inputs, and names a position inside the input.
func FuzzDecodeError(f *testing.F) {
	for _, s := range []string{"ok", "ok\xff", "ok\xe2\x82", "\xed\xa0\x80", "\xf0\x9f\x98", "\xf4\x90\x80\x80", "é€😀", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, bad := utf8DecodeError(data)
		if bad == utf8.Valid(data) {
			t.Fatalf("bad=%v for %q", bad, data)
		}
		if bad && (!strings.HasPrefix(msg, "'utf-8' codec can't decode byte") || strings.Contains(msg, "\n")) {
			t.Fatalf("message %q", msg)
		}
	})
}

// FuzzInteriorCorrupt checks the script's corrupt-line count never panics and never
// counts more lines than there are.
func FuzzInteriorCorrupt(f *testing.F) {
	for _, s := range []string{okLineSeed + "junk\n" + okLineSeed, okLineSeed + `{"seq":2,"fi`, "[1]\n{}\n", "{\"a\":NaN}\r{}\r\n", "\x1c\n \n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), ManifestFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := InteriorCorrupt(path)
		if err != nil {
			t.Fatal(err)
		}
		if lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1; n > lines {
			t.Fatalf("%d corrupt lines in %d", n, lines)
		}
	})
}

const okLineSeed = `{"seq":1,"status":"completed"}` + "\n"

// FuzzCopyContext checks the re-encoding of copied fields never panics, gives valid
// JSON, and is stable: re-encoding its own output changes nothing.
func FuzzCopyContext(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"file":"1-plan-writer.md","role":"plan-writer","phase":"2","task":3,"status":"dispatched","input_chars":124,"model_tier":"opus"}`,
		`{"role":["x",{"b":1,"a":2,"b":3}],"phase":"\u00e9","task":-0,"input_chars":1e16}`,
		`{"file":false,"role":-1.25e300,"phase":1e-5,"task":100000000000000000.0,"input_chars":-0.0}`,
		`[1]`, `{"file":"\ud800"}`, `{"task":1E400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := CopyContext(data)
		if err != nil {
			return
		}
		var b strings.Builder
		b.WriteString("{")
		for i, k := range contextKeys {
			if !json.Valid(got[k]) {
				t.Fatalf("%s: invalid JSON %q", k, got[k])
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + k + `":` + string(got[k]))
		}
		b.WriteString("}")
		again, err := CopyContext([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-reading %q: %v", b.String(), err)
		}
		for _, k := range contextKeys {
			if string(again[k]) != string(got[k]) {
				t.Fatalf("%s: %q then %q", k, got[k], again[k])
			}
		}
	})
}

// FuzzParseReceipts checks that no receipt ledger makes the reader fail or panic:
// every line is a receipt, a warning or blank.
func FuzzParseReceipts(f *testing.F) {
	for _, s := range []string{
		`{"dispatch_id":"12-build-implementer","phase":"3","rcpt_sha256":"ab12","verdict":"PASS"}` + "\n",
		`{"dispatch_id":12}` + "\n" + `{"dispatch_id":[1]}` + "\n",
		"not json\n\x00\x1b[31m\n",
		`{"dispatch_id":"1-x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		receipts, warns, err := ParseReceipts(bytes.NewReader(data), "receipt-ledger.jsonl")
		if err != nil {
			t.Fatalf("a ledger in memory cannot fail to read: %v", err)
		}
		if len(receipts)+len(warns) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d receipts and %d warnings from %d lines", len(receipts), len(warns), bytes.Count(data, []byte("\n"))+1)
		}
	})
}

func FuzzParseDispatchActive(f *testing.F) {
	for _, s := range []string{
		"dispatch-dir: /tmp/crucible-dispatch-1775430161/\nseq: 19\n",
		"dispatch_dir: /tmp/crucible-dispatch-1775430161/\nstarted: 2026-04-05T23:02:41Z\n",
		"", "seq: 3", "dispatch-dir:", ":::\n\x00", "DISPATCH-DIR :  /x  \r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := ParseDispatchActive(data)
		if strings.ContainsAny(got, "\n") || got != strings.TrimSpace(got) {
			t.Fatalf("dispatch dir %q is not one trimmed line", got)
		}
		if got != "" && !strings.Contains(string(data), got) {
			t.Fatalf("dispatch dir %q is not in the file", got)
		}
	})
}

// FuzzFlatReceipt checks that the reader of plain receipt lines reads each line it
// takes as encoding/json does.
func FuzzFlatReceipt(f *testing.F) {
	for _, s := range []string{
		`{"dispatch_id":"12-build-implementer","phase":"3","rcpt_sha256":"ab12","verdict":"PASS"}`,
		` { "dispatch_id" : "1-x" , "dispatch_id":"2-y", "other":"z" } `,
		`{"dispatch_id":"1-x",}`, `{"dispatch_id":""}`, `{"dispatch_id":"1-\u0078"}`, `{}`, `{"a":"b"}x`,
		`{"dispatch_id":"1-x","phase":3}`, "{\"dispatch_id\":\"1-x\"\f}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		fast, ok := parseFlatReceipt(text)
		if !ok {
			return
		}
		slow, err := parseReceiptJSON(text)
		if err != nil {
			t.Fatalf("%q: read as %+v, encoding/json says %v", text, fast, err)
		}
		if fast != slow {
			t.Fatalf("%q: read as %+v, encoding/json reads %+v", text, fast, slow)
		}
	})
}

// FuzzParseCutDispatchHeader checks the reader of cut dispatch headers never
// panics, never reads a file ParseDispatchHeader reads, and that more of the
// cut line only narrows what a cut header could be: the same input with more
// text after its last newline could be no phase and task it could not be.
func FuzzParseCutDispatchHeader(f *testing.F) {
	for _, s := range []string{
		"# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** null\n**Timestamp:**",
		"# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Ta",
		"# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** n",
		specDispatch, "# Dispatch: x\n**Phase:** 1\n**Task:** 2\n---", "\xef\xbb\xbf# Dispatch: x\n**Phase:** - | **Task:** -\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, ok := ParseCutDispatchHeader(data)
		if !ok {
			if h != nil {
				t.Fatalf("not ok yet a header %+v", h)
			}
			return
		}
		if _, _, err := ParseDispatchHeader(data); err == nil {
			t.Fatalf("%q is a whole dispatch header, not a cut one", data)
		}
		more := append(bytes.Clone(data), 'x')
		h2, ok2 := ParseCutDispatchHeader(more)
		if !ok2 {
			t.Fatalf("%q is no cut header once its cut line goes on", more)
		}
		for _, phase := range []string{"", "scan", "s", h.Phase.Value, h.Phase.Value + "x", h2.Phase.Value} {
			for _, task := range []string{"", "4", "null", h.Task.Value, h.Task.Value + "x", h2.Task.Value} {
				if h2.CouldBe(phase, task) && !h.CouldBe(phase, task) {
					t.Fatalf("%q could be phase %q task %q, %q could not", more, phase, task, data)
				}
			}
		}
	})
}
