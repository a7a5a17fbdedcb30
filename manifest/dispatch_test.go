package manifest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const specDispatch = "# Dispatch: build-implementer\n" +
	"**Pipeline:** build | **Phase:** 3 | **Task:** 1\n" +
	"**Timestamp:** 2026-04-07T14:52:10Z\n" +
	"**Dispatch-Dir:** /tmp/crucible-dispatch-1775430161/\n" +
	"\n---\n" +
	"<the implementer template's text>\n## Context\n<injected>\n"

func TestParseDispatchHeader(t *testing.T) {
	t.Parallel()
	h, body, err := ParseDispatchHeader([]byte(specDispatch))
	require.NoError(t, err)
	assert.Equal(t, &DispatchHeader{
		Template: "build-implementer", Pipeline: "build", Phase: "3", Task: "1",
		Timestamp:    time.Date(2026, 4, 7, 14, 52, 10, 0, time.UTC),
		TimestampRaw: "2026-04-07T14:52:10Z",
		DispatchDir:  "/tmp/crucible-dispatch-1775430161/",
	}, h)
	assert.Equal(t, "<the implementer template's text>\n## Context\n<injected>\n", string(body))
	assert.Equal(t, specDispatch, string(FormatDispatchFile(*h, body)), "format is the exact inverse")
}

func TestParseDispatchHeaderVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		check  func(t *testing.T, h *DispatchHeader, body string)
		errSub string
	}{
		{name: "crlf, no task, space timestamp", in: "# Dispatch: plan-writer\r\n**Pipeline:** build | **Phase:** 2 | **Task:** -\r\n**Timestamp:** 2026-04-07 10:00:00\r\n**Dispatch-Dir:** /d\r\n\r\n---\r\nbody",
			check: func(t *testing.T, h *DispatchHeader, body string) {
				assert.Equal(t, "", h.Task)
				assert.Equal(t, time.Date(2026, 4, 7, 10, 0, 0, 0, time.UTC), h.Timestamp)
				assert.Equal(t, "body", body)
			}},
		{name: "bad timestamp kept as text", in: "# Dispatch: x\n**Timestamp:** yesterday\n---\n",
			check: func(t *testing.T, h *DispatchHeader, body string) {
				assert.True(t, h.Timestamp.IsZero())
				assert.Equal(t, "yesterday", h.TimestampRaw)
				assert.Equal(t, "", body)
			}},
		{name: "not a dispatch", in: "# Review findings\n", errSub: `line 1: want "# Dispatch: <template>"`},
		{name: "empty", in: "", errSub: "empty dispatch file"},
		{name: "no separator", in: "# Dispatch: x\n**Pipeline:** build\n", errSub: `no "---" line`},
		{name: "separator too far", in: "# Dispatch: x\n" + string(make([]byte, 0)) + "a\na\na\na\na\na\na\na\na\na\na\na\na\na\na\na\n---\n", errSub: "first 16 lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ParseDispatchHeader([]byte(tt.in))
			if tt.errSub != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errSub)
				return
			}
			require.NoError(t, err)
			tt.check(t, h, string(body))
		})
	}
}

func TestReadDispatchDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "11-build-implementer.md", specDispatch)
	writeFile(t, dir, "15-build-reviewer-findings.md", "# Findings\n")
	writeFile(t, dir, "15-build-reviewer.md", "# Dispatch: build-reviewer\n---\n")
	writeFile(t, dir, "2-red-team.md", "# Dispatch: red-team\n---\n")
	writeFile(t, dir, ManifestFile, okLine)
	writeFile(t, dir, "notes-1.md", "x")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "30-dir"), 0o755))

	files, err := ReadDispatchDir(dir)
	require.NoError(t, err)
	type row struct {
		Seq  int
		Name string
		Kind DispatchKind
		Tmpl string
	}
	var got []row
	for _, f := range files {
		got = append(got, row{f.Seq, f.Name, f.Kind, f.Template})
		assert.Equal(t, filepath.Join(dir, f.Name), f.Path)
	}
	assert.Equal(t, []row{
		{2, "2-red-team.md", KindDispatch, "red-team"},
		{11, "11-build-implementer.md", KindDispatch, "build-implementer"},
		{15, "15-build-reviewer.md", KindDispatch, "build-reviewer"},
		{15, "15-build-reviewer-findings.md", KindOutput, ""},
	}, got)

	_, err = ReadDispatchDir(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}
