package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pipelines written the way Crucible writes them, driven through the binary.

func TestSymlinkedProjectThroughBinary(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	link := filepath.Join(p.Root, "via-link")
	require.NoError(t, os.Symlink(p.Project, link))
	cmd := s.Command(link, "status", "--now", now(p))
	cmd.Env = append(cmd.Env, "PWD="+link) // the shell's $PWD keeps the symlink
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "1775430161")
	assert.Contains(t, string(out), "pre-wave-2")

	cmd = s.Command(link, "plan", "--now", now(p))
	cmd.Env = append(cmd.Env, "PWD="+link)
	out, err = cmd.Output()
	require.NoError(t, err, "no PATH: the project's scratch dir is found through the real path")
	assert.Contains(t, string(out), "**Resume point:** Phase 3 boundary, wave 2")
}

func TestLocalTimeCheckpointsThroughBinary(t *testing.T) {
	t.Parallel()
	if _, err := time.LoadLocation("Etc/GMT-2"); err != nil {
		t.Skip("no zoneinfo for Etc/GMT-2 on this machine")
	}
	s, p := pipelineSandbox(t, fixture.LocalTimeUTCPlus2)
	s.Env = append(s.Env, "TZ=Etc/GMT-2") // the orchestrator's zone: UTC+2
	r := s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "**Resume point:** Phase 3 boundary, wave 2 (pre-wave-2, checkpoint "+p.Checkpoints[6].Hash.String()[:8])
	assert.NotContains(t, r.Stdout+r.Stderr, "differs from the shadow commit's time")

	s.Env = []string{"TZ=UTC"} // read in the wrong zone: warned, and the commit time still decides
	r = s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "wave 2 (pre-wave-2")
	assert.Contains(t, r.Stdout, "differs from the shadow commit's time")
}
