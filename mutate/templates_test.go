package mutate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "build-reviewer-prompt.md"), "a")
	writeFile(t, filepath.Join(dir, "build-reviewer.md"), "b")
	writeFile(t, filepath.Join(dir, "red-team.md"), "c")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "cleanup-prompt.md"), 0o755))
	writeFile(t, filepath.Join(dir, "cleanup.md"), "d")

	tests := []struct {
		template, want, wantErr string
	}{
		{"build-reviewer", "build-reviewer-prompt.md", ""},
		{"red-team", "red-team.md", ""},
		{"cleanup", "cleanup.md", ""}, // a directory named like the template is not it
		{"build-reviewer.md", "build-reviewer.md", ""},
		{"missing", "", "no missing-prompt.md or missing.md"},
		{"../etc/passwd", "", "not a plain file name"},
		{"..", "", "not a plain file name"},
		{"", "", "not a plain file name"},
		{`a\b`, "", "not a plain file name"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			got, err := FindTemplate(dir, tt.template)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(dir, tt.want), got)
		})
	}
	_, err := FindTemplate(dir, "missing")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
}

func TestStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Date(2026, 4, 5, 23, 2, 41, 0, time.UTC)
	touch := func(name string, when time.Time) {
		p := filepath.Join(dir, name)
		writeFile(t, p, name)
		require.NoError(t, os.Chtimes(p, when, when))
	}
	touch("build-reviewer-prompt.md", start.Add(time.Hour))
	touch("build-implementer-prompt.md", start.Add(-time.Hour))
	touch("cleanup.md", start) // same second: not after
	touch("red-team-prompt.md", start.Add(time.Second))

	got := Stale(dir, []string{"build-reviewer", "build-implementer", "cleanup", "red-team", "missing", "build-reviewer"}, start)
	assert.Equal(t, []string{
		"Warning: Template build-reviewer-prompt.md was modified after the original pipeline run. A/B comparison may be confounded by template changes unrelated to the mutation.",
		"Warning: Template red-team-prompt.md was modified after the original pipeline run. A/B comparison may be confounded by template changes unrelated to the mutation.",
	}, got)
	assert.Empty(t, Stale(dir, nil, start))
}
