package manifest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// damaged is a manifest with retries on the same seq and on a new seq, a null-phase
// completion line, a corrupt middle line, an unknown key and a torn last line.
const damaged = `{"seq":9,"file":"9-innovate.md","role":"innovate","phase":"2","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":900,"output_chars":null,"model_tier":"opus","tool_calls":null}
{"seq":9,"file":"9-innovate.md","role":"innovate","phase":null,"task":null,"status":"completed","duration_s":12.5,"summary":"ideas","input_chars":900,"output_chars":300,"model_tier":"opus","tool_calls":3}
{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":14210,"output_chars":null,"model_tier":"opus","tool_calls":null}
{"seq":12,"file":"12-build-implementer.md","role":"build-implementer","phase":3,"task":2,"status":"dispatched","duration_s":null,"summary":null,"input_chars":13980,"output_chars":null,"model_tier":"opus","tool_calls":null,"x_trace":{"id":"a b"}}
{"seq":12,"file":"12-build-implementer.md","role":"build-implementer","phase":"3","task":2,"status":"completed","duration_s":388,"summary":"Task 2 done","input_chars":13980,"output_chars":4870,"model_tier":"opus","tool_calls":27}
{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"err
{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"error","duration_s":600,"summary":"agent timed out","input_chars":14210,"output_chars":null,"model_tier":"opus","tool_calls":null}
{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":14210,"output_chars":null,"model_tier":"opus","tool_calls":null}
{"seq":13,"file":"13-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"completed","duration_s":20,"summary":"retry as new seq","input_chars":14210,"output_chars":10,"model_tier":"opus","tool_calls":2}

{"file":"x.md","status":"completed"}
{"seq":"14","status":"completed"}
{"seq":20,"file":"20-build-rev`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestReadDamaged(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "manifest.jsonl", damaged)
	m, err := Read(path)
	require.NoError(t, err)

	assert.Equal(t, Stats{Lines: 12, Valid: 8, Corrupt: 4, TornTail: true, TornSeq: 20}, m.Stats)
	assert.Equal(t, 20, m.MaxSeq)
	var seqs []int
	for _, e := range m.Entries {
		seqs = append(seqs, e.Seq)
	}
	assert.Equal(t, []int{9, 11, 12, 13}, seqs)

	e9 := m.Entry(9)
	require.NotNil(t, e9)
	assert.Equal(t, StatusCompleted, e9.Status)
	require.NotNil(t, e9.Phase)
	assert.Equal(t, "2", *e9.Phase, "the null phase is inherited from the dispatched line")
	assert.Equal(t, []string{"phase"}, e9.Inherited)
	assert.Equal(t, 2, e9.Line)

	e11 := m.Entry(11)
	require.NotNil(t, e11)
	assert.Equal(t, StatusDispatched, e11.Status, "the last line of a seq wins")
	assert.Equal(t, 8, e11.Line)
	assert.Equal(t, []Status{StatusDispatched, StatusError, StatusDispatched}, m.History[11])

	e12 := m.Entry(12)
	require.NotNil(t, e12)
	assert.Equal(t, StatusCompleted, e12.Status)
	assert.Nil(t, e12.Extra, "the winning line has no unknown keys")
	assert.Nil(t, m.Entry(10))

	var texts []string
	for _, w := range m.Warnings {
		texts = append(texts, w.String())
	}
	assert.Equal(t, []string{
		"line 2: seq 9 has no phase; kept the value of an earlier line of seq 9",
		"line 6: corrupt line skipped: not valid JSON at byte 105: the string is not closed (truncated line?)",
		"line 11: corrupt line skipped: no \"seq\" field",
		"line 12: corrupt line skipped: \"seq\" must be a whole number, got a string \"14\"",
		"line 13: torn last line (no newline, not valid JSON at byte 31: the string is not closed (truncated line?)); skipped",
	}, texts)
}

func TestReadKeepsUnknownKeysAndNumericPhase(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "manifest.jsonl",
		`{"seq":3,"phase":3,"status":"completed","x_trace":{"id": "a b"},"a_first":[1, 2]}`+"\n")
	m, err := Read(path)
	require.NoError(t, err)
	e := m.Entry(3)
	require.NotNil(t, e)
	require.NotNil(t, e.Phase)
	assert.Equal(t, "3", *e.Phase)
	line, err := EncodeLine(*e)
	require.NoError(t, err)
	assert.Equal(t, `{"seq":3,"file":"","role":"","phase":"3","task":null,"status":"completed","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":null,"tool_calls":null,"a_first":[1,2],"x_trace":{"id":"a b"}}`+"\n", string(line))
}

func TestReadNothingToResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		content *string
		want    string
	}{
		{name: "missing", want: "Manifest not found. Cannot resume."},
		{name: "empty", content: ptr(""), want: "Manifest is empty or entirely corrupted. Cannot resume."},
		{name: "blank lines", content: ptr("\n\n  \n"), want: "Manifest is empty or entirely corrupted. Cannot resume."},
		{name: "garbage", content: ptr("not json\n{\"seq\":\n[1,2]\n"), want: "Manifest is empty or entirely corrupted. Cannot resume. None of its 3 lines"},
		{name: "binary", content: ptr("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\n\x00\x01\x02\xff\xfe"), want: "It holds binary data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".jsonl")
			if tt.content != nil {
				writeFile(t, dir, tt.name+".jsonl", *tt.content)
			}
			_, err := Read(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNoManifest)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Not parallel: it measures the allocations of the whole process.
func TestReadLongLineBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	big := `{"seq":7,"summary":"` + strings.Repeat("x", 10<<20) + `"}`
	path := writeFile(t, dir, "manifest.jsonl", big+"\n"+`{"seq":8,"status":"completed"}`+"\n"+big)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Read(path)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, 3, m.Stats.Lines)
	assert.Equal(t, 1, m.Stats.Valid)
	assert.Equal(t, 2, m.Stats.Corrupt)
	assert.Equal(t, 8, m.MaxSeq, "a seq in an overlong line's head is remembered")
	require.Len(t, m.Warnings, 2)
	assert.Equal(t, Warning{Line: 1, Text: "longer than 64 KiB; skipped (not a manifest line)"}, m.Warnings[0])
	// Two 10 MB lines read with a 64 KiB buffer: far less than one line's size allocated.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20))
}

func TestReadSingleHugeLineIsNothingToResume(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "manifest.jsonl", strings.Repeat("{", 10<<20))
	_, err := Read(path)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNoManifest)
}

func TestReadManyCorruptLinesBoundsWarnings(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "manifest.jsonl", strings.Repeat("junk\n", 500)+`{"seq":1,"status":"skipped"}`+"\n")
	m, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, 500, m.Stats.Corrupt)
	require.Len(t, m.Warnings, maxCorruptWarnings+1)
	assert.Equal(t, "400 more damaged lines not listed", m.Warnings[maxCorruptWarnings].Text)
}

func TestReadDirectoryIsNotAManifest(t *testing.T) {
	t.Parallel()
	_, err := Read(t.TempDir())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNoManifest)
}

func TestReadBOMAndCRLF(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "manifest.jsonl", "\xef\xbb\xbf{\"seq\":1,\"status\":\"completed\"}\r\n{\"seq\":2,\"status\":\"failed\"}\r\n")
	m, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, Stats{Lines: 2, Valid: 2}, m.Stats)
}
