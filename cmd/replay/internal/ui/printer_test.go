package ui

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWarnfPrintsEachWarningOnceInOrder(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(&buf, Options{})
	p.Warnf("seq gap at %d", 20)
	p.Warnf("torn last line")
	p.Warnf("seq gap at %d", 20)
	fmt.Fprintln(p.Log(), "warning: torn last line")
	fmt.Fprintln(p.Log(), "warning: a third")
	assert.Equal(t, "warning: seq gap at 20\nwarning: torn last line\nwarning: a third\n", buf.String())
	assert.Equal(t, []string{"seq gap at 20", "torn last line", "a third"}, p.Warnings())
}

func TestQuietSilencesAllButKeepsWarnings(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(&buf, Options{Quiet: true, Verbose: true})
	p.Warnf("w")
	p.Infof("info")
	p.Verbosef("detail")
	fmt.Fprintln(p.Log(), "restoring")
	fmt.Fprintln(p.ProgressWriter(), "dispatch 1/2")
	assert.Empty(t, buf.String())
	assert.False(t, p.ShowProgress())
	assert.Equal(t, []string{"w"}, p.Warnings())
}

func TestVerboseAndJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"plain", Options{}, "warning: w\ninfo\nprogress\n"},
		{"verbose", Options{Verbose: true}, "warning: w\ninfo\ndetail\nprogress\n"},
		{"json keeps warnings and status on stderr, drops progress", Options{JSON: true}, "warning: w\ninfo\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			p := New(&buf, tt.opts)
			p.Warnf("w")
			p.Infof("info")
			p.Verbosef("detail")
			_, _ = io.WriteString(p.ProgressWriter(), "progress\n")
			assert.Equal(t, tt.want, buf.String())
		})
	}
}

func TestLogEscapesAndWaitsForWholeLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(&buf, Options{})
	w := p.Log()
	_, _ = io.WriteString(w, "half ")
	assert.Empty(t, buf.String())
	_, _ = io.WriteString(w, "line \x1b[31mred\nwarning: \x1b]0;title\n")
	assert.Equal(t, "half line \\x1b[31mred\nwarning: \\x1b]0;title\n", buf.String())
}
