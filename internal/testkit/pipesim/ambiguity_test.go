package pipesim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simulated lays out seed's run in memory only (no files), as Generate would.
func simulated(seed int64) *run {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	u := newRun(r, pickScript(r), start, layout{tmp: "/tmp"})
	u.simulate()
	return u
}

// Every ambiguity kind is made, and each is genuine: the generator confirms
// that nothing on disk tells the reading it built from the one a resume may
// take. The unambiguous siblings are made too.
func TestAmbiguitiesAreGenuine(t *testing.T) {
	t.Parallel()
	kinds := map[string]int{}
	shapes := map[string]int{}
	for seed := int64(1); seed <= 2000; seed++ {
		u := simulated(seed)
		for s := range u.shapes {
			shapes[s]++
		}
		for _, m := range u.amb {
			kinds[m.Check]++
			own := m.Attempts
			switch m.Check {
			case AmbNoCommit:
				require.Len(t, own, 1)
				assert.Empty(t, own[0].Commits, "seed %d", seed)
				assert.True(t, u.clear(false, own...), "seed %d: another commit near the window", seed)
			case AmbTwinCommit, AmbMisleadingTask:
				// the wave's implementers; a made the one commit of the pair,
				// b none
				var a, b *attempt
				for _, x := range own {
					assert.Equal(t, own[0].Group, x.Group)
					if x.NoCommit {
						b = x
					}
				}
				require.NotNil(t, b, "seed %d", seed)
				for _, x := range own {
					if x != b && len(x.Commits) == 1 && (x.Commits[0].Msg == twinMessage || x.Commits[0].TaskNamed == b.Role.Task && x.Role.Task != b.Role.Task) {
						a = x
					}
				}
				require.NotNil(t, a, "seed %d", seed)
				require.Len(t, a.Commits, 1, "seed %d", seed)
				assert.Empty(t, b.Commits, "seed %d", seed)
				assert.True(t, b.NoCommit)
				lo, hi := overlap(a, b)
				at := a.Commits[0].At
				assert.True(t, !at.Before(lo) && !at.After(hi), "seed %d: the commit is not inside both windows", seed)
				assert.True(t, u.clear(true, a, b), "seed %d: a commit from outside the wave near the windows", seed)
				if m.Check == AmbTwinCommit {
					assert.Equal(t, twinMessage, a.Commits[0].Msg)
				} else {
					assert.Equal(t, b.Role.Task, a.Commits[0].TaskNamed, "seed %d: the commit must name the sibling's task", seed)
				}
			case AmbEmptyOutput:
				require.Len(t, own, 1)
				assert.True(t, own[0].Output && own[0].EmptyOutput && !own[0].Receipt, "seed %d", seed)
			}
		}
	}
	for _, k := range []string{AmbNoCommit, AmbTwinCommit, AmbMisleadingTask, AmbEmptyOutput} {
		assert.Positive(t, kinds[k], "kind %s never made in 2000 seeds", k)
	}
	for _, s := range []string{"twin-commits", "misleading-task-number", "empty-output-with-receipt"} {
		assert.Positive(t, shapes[s], "shape %s never made", s)
	}
	// most seeds stay unambiguous
	total := 0
	for _, n := range kinds {
		total += n
	}
	assert.Less(t, total, 2000/50, "more than 2%% of seeds ambiguous: %v", kinds)
	t.Logf("ambiguities made in 2000 seeds: %v", kinds)
}
