package manifest

import (
	"bytes"
	"strings"
	"testing"
)

var lineSeeds = []string{
	`{"seq":11,"file":"11-build-implementer.md","role":"implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":14210,"output_chars":null,"model_tier":"opus","tool_calls":null}`,
	`{"seq":12,"file":"12-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"completed","duration_s":388,"summary":"Task 2 done, 5 tests","input_chars":13980,"output_chars":4870,"model_tier":"opus","tool_calls":27}`,
	`{"seq":9,"phase":null,"status":"completed","x":{"a":[1,2.5e-3,"s\u00e9",null,true]}}`,
	`{"seq":21,"status":"dispatched","replay_of":19,"replay_session":"1775500000","mutation":"a.md -> b.md"}`,
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
