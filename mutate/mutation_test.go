package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestParse(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	writeFile(t, filepath.Join(cwd, "stricter.md"), "# Stricter\n")
	writeFile(t, filepath.Join(cwd, "sub", "other.md"), "# Other\n")
	require.NoError(t, os.Mkdir(filepath.Join(cwd, "adir"), 0o755))
	abs := filepath.Join(cwd, "sub", "other.md")

	tests := []struct {
		name    string
		flags   []string
		want    []Mutation
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"relative", []string{"build-reviewer-prompt.md=stricter.md"},
			[]Mutation{{Orig: "build-reviewer-prompt.md", Repl: "stricter.md", Path: filepath.Join(cwd, "stricter.md"), Text: []byte("# Stricter\n")}}, ""},
		{"absolute and several", []string{"red-team.md=" + abs, "quality-gate=stricter.md"},
			[]Mutation{
				{Orig: "red-team.md", Repl: abs, Path: abs, Text: []byte("# Other\n")},
				{Orig: "quality-gate", Repl: "stricter.md", Path: filepath.Join(cwd, "stricter.md"), Text: []byte("# Stricter\n")},
			}, ""},
		{"no equals", []string{"build-reviewer-prompt.md"}, nil, "want ORIG=REPL"},
		{"empty orig", []string{"=stricter.md"}, nil, "both sides"},
		{"empty repl", []string{"x.md="}, nil, "both sides"},
		{"orig is a path", []string{"templates/x.md=stricter.md"}, nil, "not a path"},
		{"orig is dot dot", []string{"..=stricter.md"}, nil, "not a path"},
		{"orig only suffix", []string{".md=stricter.md"}, nil, "names no template"},
		{"control char", []string{"x\n.md=stricter.md"}, nil, "control characters"},
		{"duplicate", []string{"x.md=stricter.md", "x-prompt.md=sub/other.md"}, nil, "already mutated"},
		{"missing repl", []string{"x.md=nope.md"}, nil, "nope.md does not exist; create it or fix the path"},
		{"repl is a dir", []string{"x.md=adir"}, nil, "is not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.flags, cwd)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrBadMutation)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	cwd := t.TempDir()
	p := filepath.Join(cwd, "locked.md")
	writeFile(t, p, "x")
	require.NoError(t, os.Chmod(p, 0))
	_, err := Parse([]string{"x.md=locked.md"}, cwd)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be read")
	assert.ErrorIs(t, err, ErrBadMutation)
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := filepath.Join(cwd, "big.md")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", MaxReplacementBytes+1)), 0o644))
	_, err := Parse([]string{"x.md=big.md"}, cwd)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than")
}

func TestLabel(t *testing.T) {
	t.Parallel()
	m := Mutation{Orig: "build-reviewer-prompt.md", Repl: "./stricter.md", Path: "/abs/stricter.md"}
	assert.Equal(t, "build-reviewer-prompt.md -> ./stricter.md", Label(m))
	assert.Equal(t, []string{"build-reviewer-prompt.md -> ./stricter.md", "a -> b"}, Labels([]Mutation{m, {Orig: "a", Repl: "b"}}))
}

func TestMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		orig, template string
		want           bool
	}{
		{"build-reviewer-prompt.md", "build-reviewer", true},
		{"build-reviewer.md", "build-reviewer", true},
		{"build-reviewer", "build-reviewer", true},
		{"build-reviewer-prompt", "build-reviewer", true},
		{"build-reviewer-prompt.md", " build-reviewer ", true},
		{"build-reviewer-prompt.md", "build-reviewer-prompt.md", true},
		{"build-reviewer-prompt.md", "reviewer", false},
		{"reviewer-prompt.md", "build-reviewer", false},
		{"build-reviewer-prompt.md", "build-reviewer-2", false},
		{"build-reviewer-prompt.md", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.orig+"~"+tt.template, func(t *testing.T) {
			assert.Equal(t, tt.want, Mutation{Orig: tt.orig}.Matches(tt.template))
		})
	}
}

func TestForAndUnused(t *testing.T) {
	t.Parallel()
	ms := []Mutation{{Orig: "build-reviewer-prompt.md", Repl: "a"}, {Orig: "quality-gate.md", Repl: "b"}}
	templates := []string{"build-implementer", "build-reviewer", "cleanup"}
	require.NotNil(t, For(ms, "build-reviewer"))
	assert.Equal(t, "a", For(ms, "build-reviewer").Repl)
	assert.Nil(t, For(ms, "cleanup"))
	assert.Equal(t, []string{"--mutate quality-gate.md: no dispatch to re-execute uses template quality-gate.md; it changes nothing"},
		Unused(ms, templates))
	assert.Empty(t, Unused(ms[:1], templates))
}
