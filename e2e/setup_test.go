package e2e

// Fixtures and small file helpers the tests of this package share.

import (
	"os"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
)

// pipelineSandbox builds the reference fixture and a sandbox whose HOME and TMPDIR
// are the fixture's.
func pipelineSandbox(t *testing.T, variants ...fixture.Variant) (*Sandbox, *fixture.Pipeline) {
	t.Helper()
	return e2ekit.ForPipeline(t, variants...)
}

func now(p *fixture.Pipeline) string                               { return e2ekit.Now(p) }
func digest(t *testing.T, root string) string                      { return e2ekit.Digest(t, root) }
func readFile(t *testing.T, path string) string                    { return e2ekit.ReadFile(t, path) }
func copyDirTree(src, dst string) error                            { return e2ekit.CopyDirTree(src, dst) }
func cpProject(t *testing.T, s *Sandbox) (string, *git.Repository) { return e2ekit.SmallProject(t, s) }

func writeFile(t *testing.T, dir, rel, content string, mode os.FileMode) {
	e2ekit.WriteFile(t, dir, rel, content, mode)
}
