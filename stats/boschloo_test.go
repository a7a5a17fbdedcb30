package stats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBoschlooIsExactAndNoWeakerThanFisher(t *testing.T) {
	t.Parallel()
	got := BoschlooTails(7, 3, 2, 8)
	assert.Less(t, got.Greater, FisherTails(7, 3, 2, 8).Greater)
	assert.InDelta(t, 1.0, BoschlooTails(5, 5, 5, 5).Greater+BoschlooTails(5, 5, 5, 5).Less, 0.6)
	for n := 2; n <= 12; n++ {
		for x1 := 0; x1 <= n; x1++ {
			for x2 := 0; x2 <= n; x2++ {
				b, f := BoschlooTails(x1, n-x1, x2, n-x2), FisherTails(x1, n-x1, x2, n-x2)
				assert.LessOrEqual(t, b.Greater, f.Greater+1e-9, "%d/%d vs %d/%d", x1, n, x2, n)
				assert.LessOrEqual(t, b.Less, f.Less+1e-9, "%d/%d vs %d/%d", x1, n, x2, n)
			}
		}
	}
	// Symmetry: swapping the arms swaps the tails.
	s := BoschlooTails(2, 8, 7, 3)
	assert.InDelta(t, got.Greater, s.Less, 1e-9)
}

// The size of the test, brute force over a fine grid of common pass rates: the
// chance of a p-value at or below the level never exceeds the level.
func TestBoschlooSizeNeverExceedsLevel(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 7} {
		for _, level := range []float64{0.0127, 0.05} {
			for i := 1; i < 200; i++ {
				pi := float64(i) / 200
				b := binomialPMF(n, pi)
				size := 0.0
				for x1 := 0; x1 <= n; x1++ {
					for x2 := 0; x2 <= n; x2++ {
						if BoschlooTails(x1, n-x1, x2, n-x2).Greater <= level {
							size += b[x1] * b[x2]
						}
					}
				}
				assert.LessOrEqual(t, size, level*(1+1e-9), "n=%d level=%g pi=%g", n, level, pi)
			}
		}
	}
}
