package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tornEntry(seq int) Entry {
	tier := "opus"
	return Entry{Seq: seq, File: "21-build-reviewer.md", Role: "build-reviewer", Status: StatusDispatched, ModelTier: &tier}
}

func TestAppendSetsTheTornTailAside(t *testing.T) {
	t.Parallel()
	const valid = `{"seq":19,"file":"19-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"dispatched"}`
	tests := []struct {
		name, content, kept, aside string
	}{
		{name: "torn last line", content: valid + "\n" + `{"seq":20,"file":"20-build-rev`, kept: valid + "\n", aside: `{"seq":20,"file":"20-build-rev` + "\n"},
		{name: "corrupt last line with its newline", content: valid + "\n" + "garbage\n\n", kept: valid + "\n", aside: "garbage\n"},
		{name: "whole last line without newline", content: valid, kept: valid + "\n"},
		{name: "whole manifest", content: valid + "\n", kept: valid + "\n"},
		{name: "empty", content: ""},
		{name: "only a fragment", content: `{"seq":3`, aside: `{"seq":3` + "\n"},
		// cut after a space: the sidecar keeps it (crash simulator seeds 4426, 5041, 5757)
		{name: "torn after a space", content: valid + "\n" + `{"seq":20,"summary":"g06-r9 `, kept: valid + "\n", aside: `{"seq":20,"summary":"g06-r9 ` + "\n"},
		{name: "torn after a tab, blank lines after it", content: valid + "\n" + "{\"seq\":20,\t\n\n", kept: valid + "\n", aside: "{\"seq\":20,\t\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, ManifestFile)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			res, err := AppendEntry(path, tornEntry(21))
			require.NoError(t, err)
			line, err := EncodeLine(tornEntry(21))
			require.NoError(t, err)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.kept+string(line), string(data))
			side, err := os.ReadFile(filepath.Join(dir, TornSidecar))
			if tt.aside == "" {
				assert.ErrorIs(t, err, os.ErrNotExist)
				assert.Zero(t, res.SetAside)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.aside, string(side), "nothing lost")
			assert.Equal(t, len(tt.aside)-1, res.SetAside)
			c, err := InteriorCorrupt(path)
			require.NoError(t, err)
			assert.Zero(t, c, "Crucible's seq keeps working")
		})
	}
}

func TestSidecarSeqIsNeverReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"seq":1,"status":"completed"}`+"\n"+`{"seq":20,"fi`), 0o644))
	n, err := NextSeq(dir)
	require.NoError(t, err)
	assert.Equal(t, 21, n)
	_, err = AppendNext(path, func(seq int) (Entry, error) { return tornEntry(seq), nil })
	require.NoError(t, err)
	n, err = NextSeq(dir)
	require.NoError(t, err)
	assert.Equal(t, 22, n, "21 was taken; 20 lives on in the sidecar")
	require.NoError(t, Append(path, tornEntry(22)))
	side, err := os.ReadFile(filepath.Join(dir, TornSidecar))
	require.NoError(t, err)
	assert.Equal(t, `{"seq":20,"fi`+"\n", string(side), "set aside once")
}

func TestAppendRefusesASymlinkedSidecar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"seq":2,"fi`), 0o644))
	elsewhere := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, TornSidecar)))
	_, err := AppendEntry(path, tornEntry(3))
	require.Error(t, err)
	assert.NoFileExists(t, elsewhere)
	data, _ := os.ReadFile(path)
	assert.Equal(t, `{"seq":2,"fi`, string(data), "nothing changed")
}

func TestInteriorCorruptLinesReadWholeSeqs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ManifestFile)
	content := strings.Join([]string{
		`{"seq":1}`, `{"seq":12,"status":`, `{"seq":3`, `{"role":"x","file":"14-build-reviewer.md"`, `junk`, `{"seq":5}`, `{"seq":6,"fi`,
	}, "\n")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	lines, err := InteriorCorruptLines(path)
	require.NoError(t, err)
	require.Len(t, lines, 4)
	assert.Equal(t, CorruptLine{Line: 2, Text: []byte(`{"seq":12,"status":`), Seq: 12, HasSeq: true}, lines[0])
	assert.False(t, lines[1].HasSeq, "digits cut by the end of the line could be the start of a larger seq")
	assert.Equal(t, 14, lines[2].Seq)
	assert.True(t, lines[2].HasSeq)
	assert.False(t, lines[3].HasSeq)
}

func TestRepair(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	content := "{\"seq\":1}\n{\"seq\":2,\"st\n\n{\"seq\":3}\r\njunk\n{\"seq\":4}\n{\"seq\":5,\"fi"
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	now := time.Unix(1775430161, 0)
	res, err := Repair(path, now)
	require.NoError(t, err)
	require.Len(t, res.Moved, 2)
	assert.Equal(t, []int{2, 5}, []int{res.Moved[0].Line, res.Moved[1].Line})
	data, _ := os.ReadFile(path)
	assert.Equal(t, "{\"seq\":1}\n\n{\"seq\":3}\r\n{\"seq\":4}\n", string(data), "kept lines byte for byte")
	side, _ := os.ReadFile(filepath.Join(dir, CorruptSidecar))
	assert.Equal(t, "{\"seq\":2,\"st\njunk\n", string(side))
	torn, _ := os.ReadFile(filepath.Join(dir, TornSidecar))
	assert.Equal(t, "{\"seq\":5,\"fi\n", string(torn))
	backup, _ := os.ReadFile(res.Backup)
	assert.Equal(t, content, string(backup))
	assert.Equal(t, filepath.Join(dir, "manifest.jsonl.bak-1775430161"), res.Backup)
	c, err := InteriorCorrupt(path)
	require.NoError(t, err)
	assert.Zero(t, c)
	n, err := NextSeq(dir)
	require.NoError(t, err)
	assert.Equal(t, 6, n, "seqs of moved lines are never reused")

	again, err := Repair(path, now)
	require.NoError(t, err)
	assert.Empty(t, again.Backup, "nothing to do the second time")
}

func TestEncodeLineNullsOversizedLabels(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 4100)
	summary := "useful summary"
	e := Entry{Seq: 1, Status: StatusCompleted, ModelTier: &huge, Summary: &summary,
		Extra: map[string]json.RawMessage{KeyModelProfile: json.RawMessage("null"), KeyActualModel: json.RawMessage(`"m"`)}}
	line, err := EncodeLine(e)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(line), MaxLineBytes)
	assert.Equal(t, `{"seq":1,"file":"","role":"","phase":null,"task":null,"status":"completed","duration_s":null,"summary":"useful summary","input_chars":null,"output_chars":null,"model_tier":null,"model_profile":null,"actual_model":"m","tool_calls":null}`+"\n", string(line))
	assert.Equal(t, &huge, e.ModelTier, "the caller's entry is not changed")

	tier := "opus"
	big := strings.Repeat("s", 8000)
	line, err = EncodeLine(Entry{Seq: 1, Status: StatusCompleted, ModelTier: &tier, Summary: &big})
	require.NoError(t, err)
	assert.Contains(t, string(line), `"model_tier":"opus"`, "a long summary is cut before any label goes")
}

func TestModelProfile(t *testing.T) {
	t.Parallel()
	for label, want := range map[string]string{"opus": "high", "standard": "standard", "sonnet": "standard", "haiku": "low"} {
		assert.Equal(t, want, *ModelProfile(&label), label)
	}
	for _, label := range []string{"provider/custom-model", "Opus", ""} {
		assert.Nil(t, ModelProfile(&label), label)
	}
	assert.Nil(t, ModelProfile(nil))
}

// FuzzRepairLosesNothing repairs arbitrary manifests: the backup is the input, the
// result has no corrupt line, and every non-blank line is kept or in a sidecar.
func FuzzRepairLosesNothing(f *testing.F) {
	f.Add([]byte("{\"seq\":1}\njunk\n{\"seq\":2,\"fi"))
	f.Add([]byte("{\"seq\":1}\r\n\n{\"seq\":2}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, ManifestFile)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		res, err := Repair(path, time.Unix(1, 0))
		require.NoError(t, err)
		after, _ := os.ReadFile(path)
		if res.Backup == "" {
			assert.Equal(t, string(data), string(after))
			return
		}
		backup, _ := os.ReadFile(res.Backup)
		assert.Equal(t, string(data), string(backup))
		c, err := InteriorCorrupt(path)
		require.NoError(t, err)
		assert.Zero(t, c)
		side, _ := os.ReadFile(filepath.Join(dir, CorruptSidecar))
		torn, _ := os.ReadFile(filepath.Join(dir, TornSidecar))
		all := string(after) + "\n" + string(side) + string(torn)
		for _, l := range splitLines(data) {
			if s := strings.TrimRight(string(l), " \t\r\n"); strings.TrimSpace(s) != "" {
				assert.Contains(t, all, s)
			}
		}
	})
}

// FuzzTornTail checks the reader that finds the torn last line an append sets
// aside, on any bytes: it never fails on a file within the limit, what it sets
// aside is exactly the file's end from the offset it gives, and what it keeps is
// what WithoutTornTail keeps.
func FuzzTornTail(f *testing.F) {
	f.Add([]byte(`{"seq":1,"status":"dispatched"}` + "\n" + `{"seq":2,"fi`))
	f.Add([]byte("garbage\n\n"))
	f.Add([]byte(`{"seq":3}`))
	f.Add([]byte(" \r\n\t"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "m")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Skip()
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Skip()
		}
		defer fh.Close()
		start, frag, err := tornTail(fh)
		if err != nil {
			t.Fatalf("tornTail(%q): %v", data, err)
		}
		if frag == nil {
			if start != 0 {
				t.Fatalf("no torn line but offset %d", start)
			}
			return
		}
		if string(data[start:]) != string(frag) {
			t.Fatalf("set aside %q, the file ends with %q", frag, data[start:])
		}
		if kept := WithoutTornTail(data); string(kept) != string(data[:start]) {
			t.Fatalf("an append keeps %q, WithoutTornTail %q", data[:start], kept)
		}
	})
}
