package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCutDispatchHeader(t *testing.T) {
	t.Parallel()
	h, ok := ParseCutDispatchHeader([]byte("# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** null\n**Timestamp:** 2026-0"))
	require.True(t, ok)
	assert.Equal(t, CutDispatchHeader{Template: "scanner", Phase: CutField{Seen: true, Whole: true, Value: "scan"}, Task: CutField{Seen: true, Whole: true, Value: "null"}}, *h)
	h, ok = ParseCutDispatchHeader([]byte("# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** nu"))
	require.True(t, ok)
	assert.Equal(t, CutDispatchHeader{Template: "scanner", Phase: CutField{Seen: true, Whole: true, Value: "scan"}, Task: CutField{Seen: true, Value: "nu"}}, *h)
	h, ok = ParseCutDispatchHeader([]byte("# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Tas"))
	require.True(t, ok)
	assert.Equal(t, CutDispatchHeader{Template: "scanner", Phase: CutField{Seen: true, Whole: true, Value: "scan"}}, *h)
	for _, s := range []string{
		specDispatch,          // whole
		"# Dispatch: scanner", // the template line is not whole
		"# Review\n**Phase:** scan | **Task:** -\n",                  // no dispatch header
		"# Dispatch: x\n**Phase:** scan | **Task:** -\n---\n",        // whole
		"# Dispatch: x\n**Phase:** scan\n---\nbody",                  // whole
		"# Dispatch: x\n" + strings.Repeat("text\n", maxHeaderLines), // no header ends that late
	} {
		_, ok := ParseCutDispatchHeader([]byte(s))
		assert.False(t, ok, "%q", s)
	}
}

// A field the crash cut rules out only what it cannot begin; a whole one
// rules out every other value; an unseen one nothing.
func TestCutDispatchHeaderCouldBe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cut, phase, task string
		could            bool
	}{
		{"**Phase:** scan | **Task:** -\n", "scan", "", true},
		{"**Phase:** scan | **Task:** -\n", "scan", "4", false},
		{"**Phase:** scan | **Task:** -\n", "scanning", "", false},
		{"**Phase:** scan | **Task:** 4\n", "scan", "4", true},
		{"**Phase:** scan | **Task:** 4", "scan", "42", true},
		{"**Phase:** scan | **Task:** 4", "scan", "", false},
		{"**Phase:** scan | **Task:** N", "scan", "", true},
		{"**Phase:** scan | **Task:** n/", "scan", "", true},
		{"**Phase:** scan | **Task:** ", "scan", "7", true},
		{"**Phase:** scan | **Ta", "scan", "7", true},
		{"**Phase:** scan | **Ta", "report", "", false},
		{"**Phase:** code ", "code review", "", true},
		{"**Phase:** code ", "triage", "", false},
		{"**Phase:** -\n", "", "", true},
		{"**Phase:** no", "", "", true},
		{"**Pipeline:** aud", "anything", "9", true},
		{"", "anything", "", true},
	} {
		h, ok := ParseCutDispatchHeader([]byte("# Dispatch: scanner\n" + tc.cut))
		require.True(t, ok, "%q", tc.cut)
		assert.Equal(t, tc.could, h.CouldBe(tc.phase, tc.task), "%q could be phase %q task %q", tc.cut, tc.phase, tc.task)
	}
}

// Every cut of a dispatch file FormatDispatchFile writes, from the newline
// ending its template line to the "---" line, reads as a cut header that could
// be the dispatch written, and as none other of a phase or task it had read.
func TestCutDispatchHeaderEveryCutCouldBeTheDispatch(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC)
	for _, h := range []DispatchHeader{
		{Template: "scanner", Pipeline: "audit", Phase: "scan", Timestamp: at, DispatchDir: "/tmp/d"},
		{Template: "build-implementer", Pipeline: "build", Phase: "3", Task: "12", Timestamp: at, DispatchDir: "/tmp/d"},
		{Template: "reviewer", Pipeline: "audit", Phase: "code review", Timestamp: at, DispatchDir: "/tmp/d"},
	} {
		data := FormatDispatchFile(h, []byte("body\n"))
		from, to := strings.IndexByte(string(data), '\n')+1, strings.Index(string(data), "\n---\n")+1
		for n := from; n <= to; n++ {
			c, ok := ParseCutDispatchHeader(data[:n])
			require.True(t, ok, "%q", data[:n])
			assert.Equal(t, h.Template, c.Template)
			assert.True(t, c.CouldBe(h.Phase, h.Task), "%q could be phase %q task %q", data[:n], h.Phase, h.Task)
			if c.Phase.Whole {
				assert.False(t, c.CouldBe(h.Phase+"x", h.Task), "%q", data[:n])
			}
			if c.Task.Whole {
				assert.False(t, c.CouldBe(h.Phase, h.Task+"9"), "%q", data[:n])
			}
		}
	}
}
