package manifest

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// foldLineByLine is the reader's deduplication written plainly: every line through
// ParseLine, the last valid line of a seq wins, and a null or empty phase, task, role
// or file is taken from the seq's earlier lines, and FirstLine is the seq's first
// valid line. Parse must give the same entries.
func foldLineByLine(data []byte) (entries []Entry, history map[int][]Status, valid, corrupt int) {
	byseq := map[int]*Entry{}
	history = map[int][]Status{}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for no, text := range bytes.SplitAfter(data, []byte("\n")) {
		body := bytes.TrimRight(text, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		e, err := ParseLine(body)
		if err != nil {
			corrupt++
			if !bytes.HasSuffix(text, []byte("\n")) {
				break
			}
			continue
		}
		valid++
		e.Line, e.FirstLine = no+1, no+1
		if prev := byseq[e.Seq]; prev != nil {
			e.FirstLine = prev.FirstLine
			e.Inherited = nil
			if e.Phase == nil && prev.Phase != nil {
				e.Phase, e.Inherited = prev.Phase, append(e.Inherited, "phase")
			}
			if e.Task == nil && prev.Task != nil {
				e.Task, e.Inherited = prev.Task, append(e.Inherited, "task")
			}
			if e.Role == "" && prev.Role != "" {
				e.Role, e.Inherited = prev.Role, append(e.Inherited, "role")
			}
			if e.File == "" && prev.File != "" {
				e.File, e.Inherited = prev.File, append(e.Inherited, "file")
			}
		}
		byseq[e.Seq] = &e
		history[e.Seq] = append(history[e.Seq], e.Status)
	}
	for _, e := range byseq {
		entries = append(entries, *e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return a.Seq - b.Seq })
	return entries, history, valid, corrupt
}

// FuzzReadFold checks that the pipelined reader (records folded per seq, entries
// built at the end) dedupes exactly as foldLineByLine does.
func FuzzReadFold(f *testing.F) {
	for _, s := range []string{
		lineSeeds[0] + "\n" + lineSeeds[1] + "\n" + `{"seq":11,"file":"","role":null,"phase":null,"task":null,"status":"completed","duration_s":3,"summary":"","x":[1]}` + "\n",
		`{"seq":9,"phase":"2","status":"dispatched","x":1}` + "\n" + `{"seq":9,"phase":"","status":"compl\u0065ted","role":"r\u00e9"}` + "\n\n" + `{"seq":0,"status":"error"}`,
		`{"seq":1,"status":"error","phase":"2","file":"a"}` + "\r\n" + `{"seq":1,"status":"dispatched","phase":"1","file":"b","role":"x","task":7}` + "\n" + `{"seq":1,"status":"completed","task":null,"y":{}}` + "\n" + lineSeeds[6],
		"\xef\xbb\xbf" + lineSeeds[3] + "\n" + lineSeeds[5] + "\njunk\n" + lineSeeds[4] + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) >= MaxReadLineBytes {
				return // the reader skips such lines unread; not the subject here
			}
		}
		m, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		entries, history, valid, corrupt := foldLineByLine(data)
		if m.Stats.Valid != valid || m.Stats.Corrupt != corrupt {
			t.Fatalf("valid/corrupt %d/%d, want %d/%d", m.Stats.Valid, m.Stats.Corrupt, valid, corrupt)
		}
		if len(m.Entries) != len(entries) || len(m.History) != len(history) {
			t.Fatalf("%d entries, %d histories; want %d, %d", len(m.Entries), len(m.History), len(entries), len(history))
		}
		for i := range entries {
			if !reflect.DeepEqual(m.Entries[i], entries[i]) {
				t.Fatalf("entry %d:\n%+v\nwant\n%+v", i, m.Entries[i], entries[i])
			}
			if seq := entries[i].Seq; !slices.Equal(m.History[seq], history[seq]) {
				t.Fatalf("seq %d history %v, want %v", seq, m.History[seq], history[seq])
			}
		}
	})
}
