package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

const ledgerAuditProfile = `{
  "skill": "ledger-audit",
  "phases": [{"id": "1", "name": "Survey"}, {"id": "2", "name": "Repair"}],
  "boundaries": [
    {"name": "Pre-Phase 2", "phase": "2", "reasons": ["pre-ledger-fix"]},
    {"name": "Repair round", "phase": "2", "reasons": ["pre-ledger-round-2"], "mid": true}
  ],
  "roles": {"mutating": ["ledger-fixer"], "output": ["scout", "oracle"], "non_artifact": ["tally-gate"]},
  "commit_window_tolerance_s": 30
}
`

// TestProfileFlag drives --profile FILE through plan, the main command and status:
// a valid file replaces the generic profile of an unknown skill; a bad one is a
// usage error naming the file and field, before anything is read or written.
func TestProfileFlag(t *testing.T) {
	testtools.Git(t, "the corpus scripts need the git binary")
	t.Parallel()
	s := NewSandbox(t)
	buildCorpusCase(t, s, filepath.Join("..", "testdata", "corpus", "unknown-skill"))
	project := filepath.Join(s.Root, "project")
	good := filepath.Join(s.Root, "ledger-audit.json")
	require.NoError(t, os.WriteFile(good, []byte(ledgerAuditProfile), 0o644))
	bad := filepath.Join(s.Root, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(ledgerAuditProfile, `"phase": "2", "reasons": ["pre-ledger-fix"]`, `"phase": "7", "reasons": ["pre-ledger-fix"]`, 1)), 0o644))
	now := "--now=2026-04-07T12:00:00Z"

	r := s.Run(t, project, "plan", now)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `**Profile:** generic — the marker's skill "ledger-audit" has no profile`)

	r = s.Run(t, project, "plan", now, "--profile", good)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Profile:** ledger-audit — loaded from --profile "+good)
	assert.Contains(t, r.Stdout, "**Crashed at:** Phase 2 (Repair), seq 5 ledger-fixer in flight")
	assert.NotContains(t, r.Stdout, `role "oracle"`, "the profile classifies oracle")
	assert.NotContains(t, r.Stdout, "generic profile")

	r = s.Run(t, project, "--dry-run", now, "--profile", good)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Profile:** ledger-audit — loaded from --profile")

	r = s.Run(t, project, "status", now, "--profile", good)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Profile: ledger-audit (loaded from --profile "+good+")")

	for _, args := range [][]string{
		{"plan", "--profile", bad},
		{"--dry-run", "--profile", bad},
		{"--yes", "--profile", bad},
		{"status", "--profile", bad},
	} {
		r = s.Run(t, project, append(args, now)...)
		assert.Equal(t, 2, r.Code, "%v: %s", args, r.Stderr)
		assert.Contains(t, r.Stderr, "pipeline profile "+bad+`: field boundaries[0].phase: names unknown phase "7"`, "%v", args)
		assert.Empty(t, r.Stdout, "%v", args)
	}
	r = s.Run(t, project, "plan", now, "--profile", s.Root)
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "is not a regular file")
	r = s.Run(t, project, "plan", now, "--profile", filepath.Join(s.Root, "missing.json"))
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "missing.json: no such file; give a profile JSON file or a built-in profile name (build, debugging, siege)")

	refs := s.Git("-C", project, "for-each-ref", "refs/replay/")
	out, err := refs.Output()
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(out)), "a bad --profile on a resume wrote nothing")
}
