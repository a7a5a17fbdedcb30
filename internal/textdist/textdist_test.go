package textdist

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 0, Distance("a", "a"))
	assert.Equal(t, 3, Distance("", "abc"))
	assert.Equal(t, 1, Distance("héllo", "hello"), "in runes, not bytes")
	assert.Equal(t, 1, Distance("explian", "explain"), "a swap of neighbours is one edit")
	assert.Equal(t, 3, Distance("kitten", "sitting"))
}
