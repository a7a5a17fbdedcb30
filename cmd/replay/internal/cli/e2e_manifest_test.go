package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

func assertNoPanic(t *testing.T, r Result) {
	t.Helper()
	assert.NotContains(t, r.Stderr, "panic")
	assert.NotContains(t, r.Stderr, "goroutine ")
}

func TestManifestNothingToResume(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	tests := []struct {
		name  string
		setup func(dir string) string
		want  string
	}{
		{name: "empty file", setup: func(dir string) string {
			return writeAt(t, dir, "manifest.jsonl", "")
		}, want: "Manifest is empty or entirely corrupted. Cannot resume."},
		{name: "only garbage", setup: func(dir string) string {
			return writeAt(t, dir, "manifest.jsonl", "garbage\n{\"seq\":\n[]\n")
		}, want: "Manifest is empty or entirely corrupted. Cannot resume."},
		{name: "missing file", setup: func(dir string) string { return filepath.Join(dir, "manifest.jsonl") },
			want: "Manifest not found. Cannot resume."},
		{name: "dir without manifest", setup: func(dir string) string { return dir },
			want: "Manifest not found. Cannot resume."},
		{name: "binary file", setup: func(dir string) string {
			data := make([]byte, 4096)
			for i := range data {
				data[i] = byte(i * 7)
			}
			return writeAt(t, dir, "manifest.jsonl", string(data))
		}, want: "It holds binary data"},
		{name: "10 MB single line", setup: func(dir string) string {
			return writeAt(t, dir, "manifest.jsonl", `{"seq":1,"summary":"`+strings.Repeat("a", 10<<20)+`"}`+"\n")
		}, want: "Manifest is empty or entirely corrupted. Cannot resume."},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(s.Root, "case"+strconv.Itoa(i))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			path := tt.setup(dir)
			r := s.Run(t, "", "plan", path)
			assert.Equal(t, 4, r.Code, r.Stderr)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Contains(t, r.Stderr, "replay: "+path)
			assertNoPanic(t, r)
			// Exactly one error line (warnings, each one line, come before it).
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			assert.True(t, strings.HasPrefix(lines[len(lines)-1], "replay: "))
			for _, l := range lines {
				assert.Less(t, len(l), 400, "no line is a dump of the input")
			}
		})
	}
}

func TestManifestDamagedThroughCLI(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := mkDispatchDir(t, s)
	writeAt(t, dir, "manifest.jsonl",
		`{"seq":9,"file":"9-innovate.md","role":"innovate","phase":"2","task":null,"status":"dispatched"}`+"\n"+
			`{"seq":9,"file":"9-innovate.md","role":"innovate","phase":null,"task":null,"status":"completed"}`+"\n"+
			"{\"seq\":10,\"status\":\n"+
			`{"seq":10,"file":"10-red-team.md","role":"red-team","phase":"2","status":"failed"}`+"\n"+
			`{"seq":11,"file":"10-red-team.md","role":"red-team","phase":"2","status":"completed"}`+"\n"+
			`{"seq":20,"file":"20-build-rev`)
	m, err := manifest.Read(filepath.Join(dir, "manifest.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, manifest.Stats{Lines: 6, Valid: 4, Corrupt: 2, TornTail: true, TornSeq: 20}, m.Stats)
	assert.Len(t, m.Entries, 3)
	assert.Equal(t, 20, m.MaxSeq)
	var warnings strings.Builder
	for _, w := range m.Warnings {
		warnings.WriteString(w.String() + "\n")
	}
	assert.Contains(t, warnings.String(), "line 2: seq 9 has no phase")
	assert.Contains(t, warnings.String(), "line 3: corrupt line skipped")
	assert.Contains(t, warnings.String(), "line 6: torn last line")

	r := s.Run(t, "", "manifest", "seq", "--dir", dir)
	assert.Equal(t, 0, r.Code, "the corrupt line names seq 10 whole: the next free seq is known")
	assert.Equal(t, "21\n", r.Stdout)
	assert.Contains(t, r.Stderr, "line 3 is corrupt; it names seq 10")
	assert.Contains(t, r.Stderr, "replay manifest repair --dir "+dir)

	data, err := os.ReadFile(filepath.Join(dir, "manifest.jsonl"))
	require.NoError(t, err)
	writeAt(t, dir, "manifest.jsonl", strings.Replace(string(data), "{\"seq\":10,\"status\":\n", "", 1))
	r = s.Run(t, "", "manifest", "seq", "--dir", dir)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "21\n", r.Stdout, "a seq seen only in a torn line is never reused")
}

func TestManifestSeqOutOfOrder(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := mkDispatchDir(t, s)
	before := func(seq int) {
		r := s.Run(t, "", "manifest", "before", "--dir", dir, "--seq", strconv.Itoa(seq), "--file", fmt.Sprintf("%d-build-implementer.md", seq), "--role", "build-implementer", "--phase", "3", "--task", strconv.Itoa(seq-8), "--model-tier", "opus")
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	after := func(seq int) {
		r := s.Run(t, "", "manifest", "after", "--dir", dir, "--seq", strconv.Itoa(seq), "--status", "completed", "--summary", "done")
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	before(9)
	before(10)
	after(10)
	after(9)
	r := s.Run(t, "", "manifest", "seq", "--dir", dir)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "11\n", r.Stdout)

	writeAt(t, dir, "21-build-reviewer.md", "# Dispatch: build-reviewer\n")
	r = s.Run(t, "", "manifest", "seq", "--dir", dir)
	assert.Equal(t, "22\n", r.Stdout, "a dispatch file on disk counts")
}

func TestManifestPathEscapesRefused(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := mkDispatchDir(t, s)
	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "out")))
	// --file is read where it is (as the script reads it) but only its base name is
	// recorded, so a manifest line never names a path outside its dispatch dir.
	for i, file := range []string{"../../etc/passwd", "/etc/passwd", "out/passwd"} {
		r := s.Run(t, dir, "manifest", "before", "--dir", dir, "--seq", strconv.Itoa(i+1), "--file", file, "--role", "r", "--model-tier", "opus")
		assert.Equal(t, 0, r.Code, file)
		assert.True(t, strings.HasPrefix(r.Stdout, fmt.Sprintf("dispatched seq %d (passwd, ", i+1)), r.Stdout)
		assertNoPanic(t, r)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.jsonl"))
	require.NoError(t, err)
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		e, err := manifest.ParseLine([]byte(l))
		require.NoError(t, err)
		assert.Equal(t, "passwd", e.File)
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "manifest.jsonl")))

	scratch := filepath.Join(s.Home, "scratch")
	writeAt(t, dir, "manifest.jsonl", `{"seq":1,"status":"completed"}`+"\n")
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	for _, dd := range []string{"/etc", "../../etc/passwd", filepath.Join(s.Tmp, "..", "..", "crucible-dispatch-1")} {
		marker := writeAt(t, scratch, ".pipeline-active", fmt.Sprintf(`{"pipeline_id":"1775430161","skill":"build","phase":"3","start_time":"t","scratch_dir":%q,"dispatch_dir":%q}`, scratch, dd))
		r := s.Run(t, "", "plan", scratch)
		assert.Equal(t, 1, r.Code, dd)
		assert.Contains(t, r.Stderr, marker+`: field "dispatch_dir"`)
		assertNoPanic(t, r)
	}
}

func TestManifestCleanupThroughCLI(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := mkDispatchDir(t, s)
	scratch := filepath.Join(s.Home, "scratch")
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	writeAt(t, dir, "manifest.jsonl", `{"seq":1,"status":"completed"}`+"\n")
	writeAt(t, dir, "receipt-ledger.jsonl", `{"dispatch_id":"1-x"}`+"\n")
	writeAt(t, dir, "1-x.md", "# Dispatch: x\n")
	r := s.Run(t, "", "manifest", "cleanup", "--dir", dir, "--scratch", scratch, "--failed")
	require.Equal(t, 0, r.Code, r.Stderr)
	dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
	assert.Equal(t, "copied dispatch dir to "+dest+" (left /tmp in place)\n", r.Stdout)
	assert.FileExists(t, filepath.Join(dest, "1-x.md"))
	assert.DirExists(t, dir, "--failed keeps the live directory")

	r = s.Run(t, "", "manifest", "cleanup", "--dir", dir, "--scratch", scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "copied manifest.jsonl + receipt-ledger.jsonl to "+dest+"; deleted "+dir+"\n", r.Stdout)
	assert.NoDirExists(t, dir)
}
