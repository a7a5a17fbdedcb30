package fork

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// TestTreeOrdersReplaySessionsByID checks that the replays under a run are listed
// in the order of their session ids, not in the order their first lines reached the
// manifest: replicas that run at once finish (and append) in any order.
func TestTreeOrdersReplaySessionsByID(t *testing.T) {
	entries := func(sessions ...string) []manifest.Entry {
		out := []manifest.Entry{{Seq: 1, Status: manifest.StatusCompleted}}
		for i, s := range sessions {
			sess, of := s, 1
			out = append(out, manifest.Entry{Seq: i + 2, Status: manifest.StatusCompleted, ReplaySession: &sess, ReplayOf: &of})
		}
		return out
	}
	want := []string{"1775462401", "1775462401-2", "1775462401-2-2", "1775462401-2-10", "1775469999-1", "custom", "another"}
	for _, order := range [][]string{
		{"1775462401-2-10", "custom", "1775469999-1", "1775462401-2-2", "1775462401", "another", "1775462401-2"},
		{"custom", "1775462401", "1775462401-2", "1775462401-2-2", "1775462401-2-10", "1775469999-1", "another"},
	} {
		pl := &pipeline.Pipeline{
			Location:   &manifest.Location{SessionID: "orig"},
			Manifest:   &manifest.Manifest{Entries: entries(order...)},
			ScratchDir: t.TempDir(),
		}
		root, warns := Tree(pl)
		assert.Empty(t, warns)
		var got []string
		for _, c := range root.Children {
			got = append(got, c.Session)
		}
		assert.Equal(t, want, got, "manifest order %v", order)
		assert.Equal(t, 1, root.Dispatches)
	}
}
