package cli_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// TestJobsRunAWaveConcurrently re-dispatches a synthetic pipeline's last wave, whose
// implementers were dispatched together, with --jobs 3, and proves from the times
// the agent itself recorded that three implementers ran at once.
func TestJobsRunAWaveConcurrently(t *testing.T) {
	t.Parallel()
	p, err := fixture.BuildSynthetic(t.TempDir(), fixture.SyntheticOptions{Dispatches: 30, HistoryCommits: 3})
	require.NoError(t, err)
	s := &Sandbox{Root: p.Root, Home: p.Home, Tmp: p.Tmp}
	log := filepath.Join(p.Root, "agent-times.log")
	ag := writeAgent(t, p, "timed-agent.sh", `cat >/dev/null
start=$(date +%s%N)
sleep 0.5
echo "$REPLAY_ROLE $REPLAY_SEQ $start $(date +%s%N)" >> `+log+`
echo "SUMMARY: task $REPLAY_TASK done"
`)
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--jobs", "3", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	type span struct{ start, end int64 }
	var impl []span
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 4, line)
		if f[0] != "build-implementer" {
			continue
		}
		a, _ := strconv.ParseInt(f[2], 10, 64)
		b, _ := strconv.ParseInt(f[3], 10, 64)
		impl = append(impl, span{a, b})
	}
	require.GreaterOrEqual(t, len(impl), 3, "the last wave has at least three implementers")
	sort.Slice(impl, func(i, j int) bool { return impl[i].start < impl[j].start })
	first3 := impl[:3]
	latestStart := max(first3[0].start, first3[1].start, first3[2].start)
	earliestEnd := min(first3[0].end, first3[1].end, first3[2].end)
	assert.Less(t, latestStart, earliestEnd, "three implementers overlapped in time")

	readManifestSynthetic(t, p)
}

// readManifestSynthetic checks the synthetic pipeline's manifest has no corrupt or
// torn line after the concurrent re-dispatch.
func readManifestSynthetic(t *testing.T, p *fixture.Pipeline) {
	t.Helper()
	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	assert.Zero(t, m.Stats.Corrupt)
	assert.False(t, m.Stats.TornTail)
}
