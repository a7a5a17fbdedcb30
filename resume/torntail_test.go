package resume

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// A crash cut the manifest's last line (the reference fixture's seq 20
// dispatched line, no newline). The resume hands the work back to the skill,
// whose dispatch.py appends its next line blindly: glued onto the fragment,
// that line was unreadable, so the attempt it records looked as if it never
// started, and the next resume re-executed its work on top of what it left
// (crash simulator seeds 4089, 6689, 7016: a unit done twice; upstream's
// script also refuses every seq after an interior corrupt line). The resume
// now leaves the manifest ending at a line's end: the fragment moves to the
// torn sidecar, every whole line stays byte for byte, and the skill's next
// line reads back whole.
func TestRunLeavesTheManifestEndingAtALineEnd(t *testing.T) {
	t.Parallel()
	p := build(t)
	pl, a := decideFixture(t, p)
	path := pl.Location.ManifestPath
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(before, []byte(fixture.TornLine)), "the fixture's manifest ends in a torn line")
	// the live dispatch directory the marker names, where the skill appends
	livePath := filepath.Join(p.LiveDispatchDir, manifest.ManifestFile)
	require.NotEqual(t, path, livePath)
	liveBefore, err := os.ReadFile(livePath)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(liveBefore, []byte(fixture.TornLine)), "the live copy ends in the torn line too")

	var log strings.Builder
	_, err = Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Log: &log})
	require.NoError(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before[:len(before)-len(fixture.TornLine)]), string(after), "every whole line kept byte for byte, the fragment cut")
	side, err := os.ReadFile(filepath.Join(filepath.Dir(path), manifest.TornSidecar))
	require.NoError(t, err)
	assert.Equal(t, fixture.TornLine+"\n", string(side), "the fragment's bytes are kept in the sidecar")
	assert.Contains(t, log.String(), "torn last line")
	liveAfter, err := os.ReadFile(livePath)
	require.NoError(t, err)
	assert.Equal(t, string(liveBefore[:len(liveBefore)-len(fixture.TornLine)]), string(liveAfter), "the live copy's fragment set aside too")

	// the skill's dispatch.py appends its next line as it always does
	next := `{"seq":22,"file":"22-build-implementer.md","role":"build-implementer","phase":"3","task":3,"status":"dispatched","duration_s":null,"summary":null,"input_chars":900,"output_chars":null,"model_tier":"opus","tool_calls":null}` + "\n"
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(next)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	m, err := manifest.Read(path)
	require.NoError(t, err)
	assert.NotNil(t, m.Entry(22), "the skill's next line reads back whole")
	assert.Zero(t, m.Stats.Corrupt, "no corrupt line: %v", m.Warnings)

	// a manifest whose last line is whole is left alone
	_, a = decideFixture(t, p)
	again, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now.Add(time.Minute) }, Tmp: p.Tmp})
	require.NoError(t, err)
	last, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(again), string(last))
}
