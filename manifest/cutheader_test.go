package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCutDispatchHeader(t *testing.T) {
	h, ok := ParseCutDispatchHeader([]byte("# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** null\n**Timestamp:** 2026-0"))
	require.True(t, ok)
	assert.Equal(t, DispatchHeader{Template: "scanner", Pipeline: "audit", Phase: "scan"}, *h)
	for _, s := range []string{
		specDispatch, // whole
		"# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Task:** null", // the phase and task line is not whole
		"# Dispatch: scanner\n**Pipeline:** audit\n",                                  // no phase and task
		"# Review\n**Phase:** scan | **Task:** -\n",                                   // no dispatch header
		"# Dispatch: x\n**Phase:** scan | **Task:** -\n---\n",
	} {
		_, ok := ParseCutDispatchHeader([]byte(s))
		assert.False(t, ok, "%q", s)
	}
}
