//go:build replay_bench

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

// The hidden bench command is built with -tags replay_bench only; .ci/run runs
// this file's tests with the tag.

func TestManifestStats(t *testing.T) {
	t.Parallel()
	dir := dispatchDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(
		`{"seq":1,"status":"dispatched","phase":"1"}`+"\n"+`junk`+"\n"+`{"seq":1,"status":"completed","phase":null}`+"\n"+`{"seq":4,"file":"4-a`), 0o644))
	f, out, errOut := manifestFactory(t)
	opts := &ManifestStatsOptions{cmdBase: baseOf(f), Path: dir}
	opts.Global.JSON = true
	require.NoError(t, manifestStatsRun(opts))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, map[string]any{"manifest": filepath.Join(dir, manifest.ManifestFile), "lines": 4.0, "valid": 2.0, "corrupt": 2.0,
		"torn_tail": true, "torn_seq": 4.0, "entries": 1.0, "max_seq": 4.0, "next_seq": 5.0}, got)
	assert.Contains(t, errOut.String(), "line 2: corrupt line skipped")
	assert.Contains(t, errOut.String(), "line 3: seq 1 has no phase")
	assert.Contains(t, errOut.String(), "line 4: torn last line")
}
