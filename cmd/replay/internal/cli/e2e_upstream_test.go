package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// Pipelines written the way Crucible writes them, driven through the binary.

func TestTasklessCommitsThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.TasklessCommits)
	r := s.Run(t, p.Project, "plan", "--explain", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Crashed at:** Phase 3 (Execute) wave 2, seq 19 build-implementer t3 in flight")
	assert.Contains(t, r.Stdout, "**Resume point:** Phase 3 boundary, wave 2 (pre-wave-2")
	assert.NotContains(t, r.Stdout, "Failed verifications")
	assert.Regexp(t, `\| 11 +\| build-implementer +\| commit in window attributed to task 1 \| ok +\| [0-9a-f]{7} "feat: implement login form validation" \(shares words with its task: form`, r.Stdout)
}

func TestOnlyDispatchActiveThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.OnlyDispatchActive)
	r := s.Run(t, p.Project, "status", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "1775430161")
	assert.Contains(t, r.Stdout, "Phase 3 boundary, wave 2")

	r = s.Run(t, p.Project, "plan", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Source:** "+p.ManifestPath)
	assert.Contains(t, r.Stdout, "found through .dispatch-active-1775430161")
}

func TestEvictedMidPhaseCheckpointThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.EvictedPreWave2)
	r := s.Run(t, p.Project, "plan", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Desired checkpoint pre-wave-2 not found. Falling back to pre-wave-1. Replaying from Phase 3 wave 1 instead of Phase 3 wave 2.")
	assert.Contains(t, r.Stdout, "**Crashed at:** Phase 3 (Execute) wave 2, seq 19", "the crash place comes from the dispatches, not the fallback")
	assert.Contains(t, r.Stdout, "**Resume point:** Phase 3 boundary, wave 1 (pre-wave-1")
}

func TestBuildModeInSystemTmpThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.BuildModeInSystemTmp)
	r := s.Run(t, p.Project, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Build mode: feature (baseline "+p.Commits["init"].String()[:7])
	assert.NotContains(t, r.Stderr, "build-mode file")
}

func TestFailedVerificationNamedThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t, fixture.MissingTask2Cleanup)
	r := s.Run(t, p.Project, "plan", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "## Failed verifications (they moved the resume point back, or say why work may be done again)")
	assert.Contains(t, r.Stdout, "- seq 14 cleanup: commit in window attributed to task 2 failed: no project commit in")

	r = s.Run(t, p.Project, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "warning: verification failed: seq 14 cleanup: commit in window attributed to task 2 failed")
	assert.Contains(t, r.Stdout, "Verification failed, resume point moved back: seq 14 cleanup")
}

func TestChecksBeforeWritesThroughCLI(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := digest(t, p.Root)

	r := s.Run(t, p.Project, "plan", "--templates", p.Templates, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "## Checks before writing")
	assert.Contains(t, r.Stdout, "- --templates "+p.Templates+": found")

	r = s.Run(t, p.Project, "plan", "--templates", filepath.Join(p.Root, "nope"), "--now", now(p))
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stdout, "FAIL: --templates "+filepath.Join(p.Root, "nope")+": not a directory")

	r = s.Run(t, p.Project, "--dry-run", "--templates", p.Templates, "--template-ref", "no-such-ref", "--now", now(p))
	assert.Equal(t, 2, r.Code, "a bad --template-ref fails the dry run")
	assert.Contains(t, r.Stdout, "FAIL: --template-ref no-such-ref:")
	assert.Equal(t, before, digest(t, p.Root), "the plan and the dry run write nothing")

	// Seq 19's dispatch file is gone and there is no template folder: a re-dispatch
	// would stop, so the run stops before restoring anything.
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		require.NoError(t, os.Remove(filepath.Join(dir, "19-build-implementer.md")))
	}
	before = digest(t, p.Root)
	r = s.Run(t, p.Project, "plan", "--agent", "builtin:sim", "--yes", "--jobs", "2", "--now", now(p))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stdout, "FAIL: seq 19 (build-implementer): its dispatch file 19-build-implementer.md is gone")
	r = s.Run(t, p.Project, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "nothing was changed")
	assert.Equal(t, before, digest(t, p.Root), "nothing restored, nothing written")

	// With the template folder the file can be rebuilt: the plan says so.
	r = s.Run(t, p.Project, "plan", "--agent", "builtin:sim", "--templates", p.Templates, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "seq 19 (build-implementer): dispatch file gone; it will be rebuilt from the template")
	assert.Equal(t, before, digest(t, p.Root), "plan writes nothing")
	assert.True(t, strings.Contains(r.Stdout, "# Replay Plan (dry-run)"))
}
