package report

import (
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{1, "file", "1 file"},
		{2, "file", "2 files"},
		{0, "file", "0 files"},
		{1, "dispatch", "1 dispatch"},
		{3, "dispatch", "3 dispatches"},
		{2, "commit", "2 commits"},
		{2, "check", "2 checks"},
		{2, "entry", "2 entries"},
		{2, "day", "2 days"},
		{2, "checkpoint", "2 checkpoints"},
		{2, "failed check", "2 failed checks"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Count(tt.n, tt.noun))
	}
}

func TestTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 4, 7, 20, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	assert.Equal(t, "2026-04-07 18:00:00Z", Time(at))
	assert.Equal(t, "-", Time(time.Time{}))
}

func TestTableStyleFitsWidth(t *testing.T) {
	t.Parallel()
	header := []string{"Seq", "Role", "Detail"}
	detail := "a very long detail that would make the line far wider than the terminal"
	rows := [][]string{
		{"1", "build-implementer", detail},
		{"2", "red-team", "short"},
	}
	var b strings.Builder
	require.NoError(t, TableStyle{Text: true, Width: 50}.Write(&b, header, rows))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	assert.Equal(t, "+-----+-------------------+----------------------+", lines[0])
	for _, l := range lines {
		assert.LessOrEqual(t, runewidth.StringWidth(l), 50, l)
	}
	assert.Contains(t, b.String(), "| a very long detail   |")
	for _, w := range strings.Fields(detail) {
		assert.Contains(t, b.String(), w, "the text table wraps, it does not cut")
	}
	assert.Contains(t, b.String(), "short")

	b.Reset()
	require.NoError(t, TableStyle{Width: 50}.Write(&b, header, rows))
	assert.Contains(t, b.String(), "| "+detail+" |", "a markdown table is never cut")
}

func TestTableStyleNoLimitKeepsCells(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	var b strings.Builder
	require.NoError(t, TableStyle{}.Write(&b, []string{"A"}, [][]string{{long}}))
	assert.Contains(t, b.String(), long)
	b.Reset()
	require.NoError(t, TableStyle{Width: 5}.Write(&b, []string{"Alpha", "Beta"}, [][]string{{long, long}}))
	assert.Contains(t, b.String(), long)
	// Too narrow for the columns: one record per block, every character kept and
	// the word whole (only a word wider than the line is ever wider than it).
	b.Reset()
	require.NoError(t, TableStyle{Text: true, Width: 5}.Write(&b, []string{"Alpha", "Beta"}, [][]string{{long, long}}))
	assert.Equal(t, 600, strings.Count(b.String(), "x"))
	assert.Equal(t, "Alpha:\n  "+long+"\n  Beta:\n    "+long+"\n", b.String())
}

func TestWriteDiffOnScreenFitsWidth(t *testing.T) {
	t.Parallel()
	var file, screen strings.Builder
	require.NoError(t, WriteDiffMarkdown(&file, fullDiff()))
	require.NoError(t, WriteDiff(&screen, fullDiff(), TableStyle{Text: true, Width: 70}))
	for _, line := range strings.Split(screen.String(), "\n") {
		if strings.HasPrefix(line, "|") || strings.HasPrefix(line, "+") {
			assert.LessOrEqual(t, runewidth.StringWidth(line), 70, line)
		}
	}
	assert.NotContains(t, screen.String(), "…", "the screen's form wraps, it does not cut")
	assert.NotContains(t, file.String(), "…", "the file's form is never cut")
}
