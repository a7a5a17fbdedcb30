package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type verifyDoc struct {
	Items []struct {
		Seq     int      `json:"seq"`
		Class   string   `json:"class"`
		Key     string   `json:"key"`
		Changed []string `json:"changed"`
		Reason  string   `json:"reason"`
	} `json:"items"`
	Counts map[string]int `json:"counts"`
}

func runVerify(t *testing.T, s *Sandbox, dir string, args ...string) (Result, verifyDoc) {
	t.Helper()
	r := s.Run(t, dir, append([]string{"verify", "--json"}, args...)...)
	var doc verifyDoc
	if r.Code == 0 || r.Code == 5 {
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout+r.Stderr)
	}
	return r, doc
}

func TestVerifyClassifiesRecordings(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	r, doc := runVerify(t, s, p.Project, p.Scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	require.NotEmpty(t, doc.Items)
	var rec21 string
	for _, it := range doc.Items {
		if it.Seq == 19 || it.Seq == 21 { // 21 replayed 19: the same body, the same recording
			assert.Equal(t, "valid", it.Class, it.Reason)
			rec21 = it.Key
		} else {
			assert.Equal(t, "absent", it.Class, "seq %d was never recorded", it.Seq)
		}
	}
	require.NotEmpty(t, rec21)
	assert.Equal(t, 2, doc.Counts["valid"])

	r, _ = runVerify(t, s, p.Project, p.Scratch, "--strict")
	assert.Equal(t, 5, r.Code, "the original dispatches have no recording")
	assert.Contains(t, r.Stderr, "a recorded replay would not be faithful")

	// Another agent makes the recording stale; the text output names the field.
	r = s.Run(t, p.Project, "verify", p.Scratch, "--agent", "./other-agent.sh")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "stale")
	assert.Contains(t, r.Stdout, "agent changed since it was recorded")

	// A tampered recording is corrupt, and nothing is written by verify.
	path := filepath.Join(p.DurableDispatchDir, "responses", rec21+".json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(string(data[:len(data)/2])), 0o644))
	r, doc = runVerify(t, s, p.Project, p.Scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, 2, doc.Counts["corrupt"])
}
