package mutate

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	reviewerTemplate = "# Build Reviewer\n\nReview the task's diff against the plan. Write findings and a PASS/FAIL verdict.\n"
	stricterTemplate = "# Stricter Build Reviewer\n\nFail the task unless every finding is fixed.\n"
	context          = "## Context\nTask 1: review internal/login against the plan.\n"
)

func TestSubstitute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		orig     string
		repl     string
		want     string
		wantMode SubstituteMode
	}{
		{"template prefix, fixture layout", reviewerTemplate + context, reviewerTemplate, stricterTemplate,
			"# Stricter Build Reviewer\n\nFail the task unless every finding is fixed.\n" + context, ModeTemplatePrefix},
		{"template prefix keeps the separator", reviewerTemplate + "\n\n" + context, reviewerTemplate, stricterTemplate + "\n\n\n",
			"# Stricter Build Reviewer\n\nFail the task unless every finding is fixed.\n\n\n" + context, ModeTemplatePrefix},
		{"template prefix, no context heading", reviewerTemplate + "Extra: defect signature D-7\n", reviewerTemplate, "# New\n",
			"# New\nExtra: defect signature D-7\n", ModeTemplatePrefix},
		{"template file without trailing newline", reviewerTemplate + context, "# Build Reviewer\n\nReview the task's diff against the plan. Write findings and a PASS/FAIL verdict.", stricterTemplate,
			stricterTemplate + context, ModeTemplatePrefix},
		{"template changed since: context heading", "# Build Reviewer v0\n\nOld text.\n\n" + context, reviewerTemplate, stricterTemplate,
			"# Stricter Build Reviewer\n\nFail the task unless every finding is fixed.\n\n" + context, ModeContextHeading},
		{"original template unknown: context heading", "# Old\n" + context, "", stricterTemplate,
			"# Stricter Build Reviewer\n\nFail the task unless every finding is fixed.\n" + context, ModeContextHeading},
		{"heading with suffix", "# Old\n\n## Context (injected by the orchestrator)\nx\n", "", "# New",
			"# New\n\n## Context (injected by the orchestrator)\nx\n", ModeContextHeading},
		{"body is only context", context, "nomatch", "# New\n", "# New\n\n" + context, ModeContextHeading},
		{"empty replacement", "# Old\n\n" + context, "", "", context, ModeContextHeading},
		{"heading inside the template text is not needed", reviewerTemplate + "## Context\n" + "## Context\nx\n", reviewerTemplate, "# R\n",
			"# R\n## Context\n## Context\nx\n", ModeTemplatePrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, mode, err := Substitute([]byte(tt.body), []byte(tt.orig), []byte(tt.repl))
			require.NoError(t, err)
			assert.Equal(t, tt.wantMode, mode)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestSubstituteNotLocated(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, orig string }{
		{"no template, no heading", "# Something else\n\nTask 1.\n", reviewerTemplate},
		{"heading-like word", "# Old\n## Contextual notes\nx\n", ""},
		{"heading not at line start", "# Old\n ## Context\nx\n", ""},
		{"empty body", "", reviewerTemplate},
		{"whitespace template does not match everything", "body\n", "  \n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, mode, err := Substitute([]byte(tt.body), []byte(tt.orig), []byte("# R\n"))
			assert.True(t, errors.Is(err, ErrTemplateNotLocated))
			assert.Equal(t, ModeNone, mode)
			assert.Nil(t, got)
		})
	}
}

func TestContextHeadingsIsConfigurable(t *testing.T) {
	// Not parallel: it changes the package variable ContextHeadings.
	saved := ContextHeadings
	t.Cleanup(func() { ContextHeadings = saved })
	ContextHeadings = []string{"## Context", "## Injected"}
	got, mode, err := Substitute([]byte("# Old\n\n## Injected\nx\n"), nil, []byte("# New\n"))
	require.NoError(t, err)
	assert.Equal(t, ModeContextHeading, mode)
	assert.Equal(t, "# New\n\n## Injected\nx\n", string(got))
}

// FuzzSubstitute checks that Substitute never panics, keeps the context it found
// byte for byte, starts the result with the replacement, and that a template-prefix
// swap is undone by swapping back.
func FuzzSubstitute(f *testing.F) {
	f.Add([]byte(reviewerTemplate+context), []byte(reviewerTemplate), []byte(stricterTemplate))
	f.Add([]byte("# Old\n\n"+context), []byte(reviewerTemplate), []byte(stricterTemplate))
	f.Add([]byte(context), []byte(""), []byte(""))
	f.Add([]byte("no heading\n"), []byte("x"), []byte("y"))
	f.Add([]byte("## Context"), []byte("\n\n"), []byte("\r\n"))
	f.Fuzz(func(t *testing.T, body, orig, repl []byte) {
		got, mode, err := Substitute(body, orig, repl)
		if err != nil {
			if !errors.Is(err, ErrTemplateNotLocated) || mode != ModeNone || got != nil {
				t.Fatalf("error %v with mode %v and result %q", err, mode, got)
			}
			return
		}
		trimmedRepl := bytes.TrimRight(repl, trailingSpace)
		if !bytes.HasPrefix(got, trimmedRepl) {
			t.Fatalf("result %q does not start with the replacement %q", got, trimmedRepl)
		}
		switch mode {
		case ModeTemplatePrefix:
			trimmedOrig := bytes.TrimRight(orig, trailingSpace)
			rest := body[len(trimmedOrig):]
			if !bytes.Equal(got, append(append([]byte{}, trimmedRepl...), rest...)) {
				t.Fatalf("prefix swap of %q in %q gave %q", trimmedOrig, body, got)
			}
			if len(trimmedRepl) > 0 {
				back, backMode, err := Substitute(got, repl, orig)
				if err != nil || backMode != ModeTemplatePrefix || !bytes.Equal(back, append(append([]byte{}, trimmedOrig...), rest...)) {
					t.Fatalf("swap back of %q gave %q, %v, %v", got, back, backMode, err)
				}
			}
		case ModeContextHeading:
			at, ok := contextHeading(body)
			if !ok || !bytes.HasSuffix(got, body[at:]) {
				t.Fatalf("context %q of %q not kept in %q", body[at:], body, got)
			}
		default:
			t.Fatalf("mode %v without error", mode)
		}
	})
}
