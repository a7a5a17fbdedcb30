package redispatch

import (
	"testing"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
)

// buildFixture builds the reference crashed pipeline in a temporary directory,
// with HOME and TMPDIR inside it.
func buildFixture(t *testing.T) *fixture.Pipeline {
	t.Helper()
	return e2ekit.Hermetic(t)
}
