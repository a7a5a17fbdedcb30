package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// A crash cut the manifest's last line after every recorded dispatch had
// completed. The resume finds nothing to restore or re-execute, and the skill
// goes on from there: its dispatch.py appends its next line blindly, glued
// onto the fragment, so that line was unreadable and the next resume set the
// glued pair aside, an original line with it (crash simulator seed 29918:
// "the lines of crash 2 are not a prefix of the final manifest"). A resume
// with nothing to redo hands the run back to the skill as any other does: the
// fragment moves to the torn sidecar first, every whole line kept byte for
// byte, and a dry run still writes nothing.
func TestNothingToResumeStillSetsTheTornTailAside(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	const fragment = `{"seq":3,"file":"3-triager.md","role":"tri`
	buildScript(t, s, wordsPipeline+`
dispatch 2 scanner scanner scan - "2026-04-07 09:06:00" audit "Scan services/billing for leaked secrets. Write your findings to 2-scanner-output.md."
output 2 scanner "no secrets"
done_ 2 completed 120 "no secrets"
checkpoint pre-triage "2026-04-07 09:10:00" audit
printf '%s' '`+fragment+`' >>"$DD/manifest.jsonl"
`)
	project := filepath.Join(s.Root, "project")
	path := filepath.Join(s.Root, "tmp", "crucible-dispatch-1775566800", manifest.ManifestFile)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(before), fragment), "the manifest ends in the fragment")
	now := "--now=2026-04-07T12:00:00Z"

	dry := s.Run(t, project, "--dry-run", now)
	require.Equal(t, 0, dry.Code, dry.Stderr)
	same, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(same), "a dry run writes nothing")

	r := s.Run(t, project, "--yes", now)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing to resume")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(string(before), fragment), string(after), "every whole line kept byte for byte, the fragment cut")
	side, err := os.ReadFile(filepath.Join(filepath.Dir(path), manifest.TornSidecar))
	require.NoError(t, err)
	assert.Equal(t, fragment+"\n", string(side), "the fragment's bytes are kept in the sidecar")
	assert.Contains(t, r.Stderr, "torn last line")
}
