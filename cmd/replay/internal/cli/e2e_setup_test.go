package cli_test

// Fixtures and small file helpers the tests of this package share.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
func cpProject(t *testing.T, s *Sandbox) (string, *git.Repository) { return e2ekit.SmallProject(t, s) }

func writeFile(t *testing.T, dir, rel, content string, mode os.FileMode) {
	e2ekit.WriteFile(t, dir, rel, content, mode)
}

func mkDispatchDir(t *testing.T, s *Sandbox) string {
	t.Helper()
	dir := filepath.Join(s.Tmp, "crucible-dispatch-1775430161")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func writeAt(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// readManifest reads the fixture's manifest and checks that every warning is about
// an original line: the lines replay appended are all valid.
func readManifest(t *testing.T, p *fixture.Pipeline) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	for _, w := range m.Warnings {
		assert.LessOrEqual(t, w.Line, originalLines, "a line replay appended is damaged: %s", w)
	}
	return m
}

// writeAgent writes a shell agent script into the sandbox and returns the --agent value.
func writeAgent(t *testing.T, p *fixture.Pipeline, name, script string) string {
	t.Helper()
	path := filepath.Join(p.Root, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755))
	return "sh " + path
}

// originalLines is how many lines the fixture's manifest has before replay appends.
const originalLines = 40
