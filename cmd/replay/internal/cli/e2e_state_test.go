package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/resume"
)

func TestStateAtSeq(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)

	r := s.Run(t, p.Project, "state", p.Scratch, "--at", "14")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "# State at seq 14")
	assert.Contains(t, r.Stdout, "Checkpoint in effect: ")
	assert.Contains(t, r.Stdout, "seq 14 cleanup t2 wave 1: dispatched")
	assert.Contains(t, r.Stdout, "seq 13 cleanup t1 wave 1: completed")
	assert.Contains(t, r.Stdout, "- internal/login/form.go")
	assert.Contains(t, r.Stdout, "===COMPRESSION_STATE===")

	r = s.Run(t, p.Project, "state", p.Scratch, "--at", "12", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var snap resume.Snapshot
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &snap))
	assert.Equal(t, 12, snap.At)
	require.NotNil(t, snap.Checkpoint)
	assert.Equal(t, "pre-wave-1", snap.Checkpoint.Reason)
	require.NotNil(t, snap.CSB)
	assert.Equal(t, before, digest(t, p.Root), "state writes nothing")
}

func TestStateBadAt(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)
	for _, at := range []string{"0", "-3", "20"} {
		r := s.Run(t, p.Project, "state", p.Scratch, "--at", at)
		assert.Equal(t, 2, r.Code, at)
		assert.Contains(t, r.Stderr, "give a seq from 1 to 19", at)
		assert.Empty(t, r.Stdout)
	}
	r := s.Run(t, p.Project, "state", p.Scratch)
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "--at")
	assert.Equal(t, before, digest(t, p.Root))
}
