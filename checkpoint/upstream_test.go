package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
)

// Crucible stamps a checkpoint subject with the orchestrator's wall clock and no
// zone; the shadow commit's zoned time is the truth, the subject is read in local
// time, and a disagreement of more than a minute is a warning naming both.
func TestCheckpointTimeIsTheCommitTime(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	plus2 := time.FixedZone("UTC+2", 2*3600)

	p := newTestProject(t)
	s := p.store()
	when := time.Date(2026, 4, 7, 14, 0, 0, 0, time.UTC)
	p.write("a.txt", "a\n")
	p.foreign(s, "pre-wave-2 | 2026-04-07 16:00:00 | build", when.In(plus2))

	time.Local = plus2 // the machine's zone is the orchestrator's
	cps, warnings, err := s.List()
	require.NoError(t, err)
	require.Len(t, cps, 1)
	assert.True(t, cps[0].Time.Equal(when), "time %s", cps[0].Time)
	for _, w := range warnings {
		assert.NotContains(t, w, "differs from the shadow commit's time")
	}

	time.Local = time.UTC // read in another zone: warned, the commit time still wins
	cps, warnings, err = s.List()
	require.NoError(t, err)
	assert.True(t, cps[0].Time.Equal(when))
	joined := strings.Join(warnings, "\n")
	assert.Contains(t, joined, `subject time "2026-04-07 16:00:00" (read as 2026-04-07T16:00:00Z local time) differs from the shadow commit's time 2026-04-07T16:00:00+02:00 by 2h0m0s; using the commit's time`)

	// Within a minute is agreement.
	p.write("b.txt", "b\n")
	p.foreign(s, "pre-wave-3 | 2026-04-07 14:10:30 | build", when.Add(10*time.Minute))
	_, warnings, err = s.List()
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(warnings, "\n"), "checkpoint "+shortOf(t, s, 1)+": subject time")
}

func shortOf(t *testing.T, s *Store, i int) string {
	t.Helper()
	cps, _, err := s.List()
	require.NoError(t, err)
	return cps[i].Short
}

// checkpoint-manifest.md lives inside the shadow git dir, rows only, as Crucible
// keeps it; the older table beside the shadow dir is still read and carried over.
func TestCheckpointManifestPlaceAndShape(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	time.Local = time.UTC

	p := newTestProject(t)
	s := p.store()
	legacy := paths.LegacyCheckpointManifest(p.shadow)
	inside := paths.CheckpointManifest(p.shadow)
	assert.Equal(t, filepath.Join(p.shadow, "checkpoint-manifest.md"), inside)

	// An older replay's table beside the shadow dir, with its header and a row
	// written by hand in an odd spacing that must survive as written.
	p.write("a.txt", "a\n")
	first := p.foreign(s, "pre-wave-1 | 2026-04-07T14:00:00Z | build", base)
	oldRow := "|" + first.String()[:8] + "|2026-04-07 14:00:00|pre-wave-1|build|"
	require.NoError(t, os.WriteFile(legacy, []byte("# Checkpoint Manifest\n\n| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n"+oldRow+"\n"), 0o644))
	cps, warnings, err := s.List()
	require.NoError(t, err)
	assert.True(t, cps[0].InManifest, "the table beside the shadow dir is read")
	assert.Empty(t, warnings)

	p.write("b.txt", "b\n")
	cp, created, err := s.Create(CreateOptions{Reason: "pre-wave-2", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	data, err := os.ReadFile(inside)
	require.NoError(t, err)
	assert.Equal(t, oldRow+"\n| "+cp.Short+" | 2026-04-07 15:00:00 | pre-wave-2 | build |\n", string(data), "rows only, old rows carried over as written")
	oldLegacy, err := os.ReadFile(legacy)
	require.NoError(t, err)
	assert.Contains(t, string(oldLegacy), "# Checkpoint Manifest", "the older table is left as it was")

	cps, warnings, err = s.List()
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.True(t, cps[0].InManifest)
	assert.True(t, cps[1].InManifest)
}
