package main

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docsDir is the repository's docs directory, seen from this package.
const docsDir = "../../../../docs"

// TestCommittedReferenceIsCurrent regenerates the reference into a temp dir and
// compares it with the committed pages, file by file: a page that differs, one
// that is missing and one of a command that no longer exists all fail.
func TestCommittedReferenceIsCurrent(t *testing.T) {
	tmp := t.TempDir()
	// The pages must not depend on who generates them or where.
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("TMPDIR", filepath.Join(tmp, "tmp"))
	t.Setenv("NO_COLOR", "1")
	out := filepath.Join(tmp, "docs")
	require.NoError(t, Generate(out))

	for _, sub := range []string{referenceDir, manDir} {
		want := pages(t, filepath.Join(out, sub))
		got := pages(t, filepath.Join(docsDir, sub))
		require.NotEmpty(t, want, "docgen wrote no %s pages", sub)
		for name, content := range want {
			committed, ok := got[name]
			if !assert.True(t, ok, "docs/%s/%s is missing: run go run ./cmd/replay/internal/docgen", sub, name) {
				continue
			}
			assert.Equal(t, content, committed, "docs/%s/%s is stale: run go run ./cmd/replay/internal/docgen", sub, name)
		}
		for name := range got {
			_, ok := want[name]
			assert.True(t, ok, "docs/%s/%s is no command's page: run go run ./cmd/replay/internal/docgen", sub, name)
		}
	}
}

// TestGenerateIsDeterministic runs the generator twice and expects the same bytes,
// and a page of every visible command (hidden ones have none).
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	require.NoError(t, Generate(a))
	require.NoError(t, Generate(b))
	for _, sub := range []string{referenceDir, manDir} {
		assert.Equal(t, pages(t, filepath.Join(a, sub)), pages(t, filepath.Join(b, sub)), sub)
	}
	ref := pages(t, filepath.Join(a, referenceDir))
	for _, name := range []string{"replay.md", "replay_plan.md", "replay_checkpoint_restore.md", "replay_mcp.md"} {
		assert.Contains(t, ref, name)
	}
	for name := range ref {
		assert.NotContains(t, name, "bench-fixture", "a hidden command has no page")
	}
	man := pages(t, filepath.Join(a, manDir))
	assert.Contains(t, man["replay-plan.1"], `.TH "REPLAY" "1" "Jan 2026" "replay" "replay manual"`, "the man page date is pinned")
}

// TestGenerateReplacesOnlyItsOwnPages checks that a page of a removed command goes
// away while a file docgen does not write stays.
func TestGenerateReplacesOnlyItsOwnPages(t *testing.T) {
	out := t.TempDir()
	ref := filepath.Join(out, referenceDir)
	require.NoError(t, os.MkdirAll(ref, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ref, "replay_gone.md"), []byte("old\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ref, "notes.txt"), []byte("mine\n"), 0o644))
	require.NoError(t, Generate(out))
	assert.NoFileExists(t, filepath.Join(ref, "replay_gone.md"))
	assert.FileExists(t, filepath.Join(ref, "notes.txt"))
	assert.FileExists(t, filepath.Join(ref, "replay.md"))
}

// pages reads the generated pages of dir by file name.
func pages(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && generatedName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		out[name] = string(data)
	}
	return out
}
