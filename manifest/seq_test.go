package manifest

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func line(seq int, status string) string {
	return `{"seq":` + itoa(seq) + `,"file":"` + itoa(seq) + `-x.md","role":"r","status":"` + status + `"}` + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestNextSeq(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest *string
		files    []string
		want     int
	}{
		{name: "out of order 9d 10d 10c 9c", manifest: ptr(line(9, "dispatched") + line(10, "dispatched") + line(10, "completed") + line(9, "completed")), want: 11},
		{name: "torn line seq counts", manifest: ptr(line(19, "dispatched") + `{"seq":20,"file":"20-build-rev`), want: 21},
		{name: "corrupt line seq counts", manifest: ptr(line(3, "completed") + `{"seq":30,"status":"bogus"}` + "\n"), want: 31},
		{name: "dispatch and output files count", manifest: ptr(line(19, "completed")), files: []string{"21-build-reviewer.md", "22-build-reviewer-findings.md", "notes.md", "x-1.md"}, want: 23},
		{name: "no manifest", want: 1},
		{name: "no manifest, files", files: []string{"4-plan-writer.md"}, want: 5},
		{name: "garbage manifest", manifest: ptr("junk\n"), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.manifest != nil {
				writeFile(t, dir, ManifestFile, *tt.manifest)
			}
			for _, f := range tt.files {
				writeFile(t, dir, f, "x")
			}
			got, err := NextSeq(dir)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNextSeqMissingDir(t *testing.T) {
	t.Parallel()
	got, err := NextSeq(filepath.Join(t.TempDir(), "nope"))
	require.NoError(t, err)
	assert.Equal(t, 1, got, "like the script: no directory, no manifest, seq 1")
}

func TestInteriorCorrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    int
	}{
		{name: "empty", content: "", want: 0},
		{name: "torn last line", content: okLine + `{"seq":2,"fi`, want: 0},
		{name: "corrupt last line with newline", content: okLine + "garbage\n\n  \n", want: 0},
		{name: "corrupt middle line", content: okLine + "garbage\n" + okLine, want: 1},
		{name: "two corrupt middle lines and a torn tail", content: "x\n" + okLine + "[\n" + okLine + `{"se`, want: 2},
		{name: "json that is not an object", content: "[1,2]\n" + okLine, want: 1},
		{name: "python literals are json to the script", content: `{"seq":1,"x":NaN,"y":-Infinity}` + "\n" + okLine, want: 0},
		{name: "cr line ends split lines", content: okLine[:len(okLine)-1] + "\rjunk\r" + okLine, want: 1},
		{name: "blank lines are not lines", content: "\n \t\n" + okLine + "\x1c\n" + okLine, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), ManifestFile, tt.content)
			got, err := InteriorCorrupt(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	got, err := InteriorCorrupt(filepath.Join(t.TempDir(), ManifestFile))
	require.NoError(t, err)
	assert.Zero(t, got, "a missing manifest has no corrupt lines")
}

func TestFindLast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(line(1, "dispatched"))
	b.WriteString(`{"seq":1,"summary":"` + strings.Repeat("z", 200<<10) + `"}` + "\n") // overlong, skipped
	for i := 2; i < 3000; i++ {
		b.WriteString(line(i, "dispatched"))
		b.WriteString(line(i, "completed"))
	}
	b.WriteString("junk\n")
	b.WriteString(`{"seq":5000,"file":"5000-tail`) // torn
	path := writeFile(t, dir, ManifestFile, b.String())

	isDispatched := func(seq int) func(*Entry) bool {
		return func(e *Entry) bool { return e.Seq == seq && e.Status == StatusDispatched }
	}
	for _, seq := range []int{1, 2, 1500, 2999} {
		e, err := FindLast(path, isDispatched(seq))
		require.NoError(t, err)
		require.NotNil(t, e, "seq %d", seq)
		assert.Equal(t, seq, e.Seq)
	}
	e, err := FindLast(path, isDispatched(4000))
	require.NoError(t, err)
	assert.Nil(t, e)
}
