package resume

import (
	"math/rand"
	"slices"
	"testing"
	"time"
)

// TestOverlapsMatchesPairwise checks the sorted overlap search against comparing
// every pair of windows, on random windows with shared ends, zero and reversed lengths.
func TestOverlapsMatchesPairwise(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(19))
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for round := 0; round < 200; round++ {
		ws := make([][2]time.Time, r.Intn(40))
		for i := range ws {
			start := base.Add(time.Duration(r.Intn(100)) * time.Second)
			ws[i] = [2]time.Time{start, start.Add(time.Duration(r.Intn(30)-3) * time.Second)}
		}
		o := newOverlaps(ws)
		for _, w := range ws {
			var want []int
			for j, e := range ws {
				if !e[0].After(w[1]) && !e[1].Before(w[0]) {
					want = append(want, j)
				}
			}
			if got := o.with(w); !slices.Equal(got, want) {
				t.Fatalf("round %d: window %v overlaps %v, want %v", round, w, got, want)
			}
		}
	}
}
