package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
)

// outsideFile makes a file outside the dispatch dir that a planted link aims at.
func outsideFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "victim.txt")
	require.NoError(t, os.WriteFile(path, []byte("keep me\n"), 0o644))
	return path
}

func assertUntouched(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(data), "the file outside the run is untouched")
}

func TestAgentLogRefusesPlantedLinks(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, req Request, victim string){
		"symlinked agent-logs dir": func(t *testing.T, req Request, victim string) {
			require.NoError(t, os.Symlink(filepath.Dir(victim), filepath.Join(req.DispatchDir, AgentLogsDir)))
		},
		"symlinked log file": func(t *testing.T, req Request, victim string) {
			require.NoError(t, os.MkdirAll(filepath.Join(req.DispatchDir, AgentLogsDir), 0o755))
			require.NoError(t, os.Symlink(victim, StderrLogPath(req)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
			victim := outsideFile(t)
			if name == "symlinked agent-logs dir" {
				// Aim the log name at the victim inside the linked directory.
				victim = filepath.Join(filepath.Dir(victim), "21-build-implementer.stderr.log")
				require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
			}
			plant(t, req, victim)
			a, err := New("echo done; echo oops >&2", Options{})
			require.NoError(t, err)
			_, err = a.Run(context.Background(), req)
			require.ErrorIs(t, err, safewrite.ErrLink)
			assert.Contains(t, err.Error(), "is a symbolic link")
			assertUntouched(t, victim)
		})
	}
}

func TestStoreSaveRefusesASymlinkedResponsesDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, ResponsesDir)))
	s := OpenStore(dir)
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	err := s.Save(key, Request{Seq: 1, Template: "t", Now: clock}, Response{Status: manifest.StatusCompleted, Summary: "ok"})
	require.ErrorIs(t, err, safewrite.ErrLink)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")

	// The same store in a real directory saves.
	require.NoError(t, os.Remove(filepath.Join(dir, ResponsesDir)))
	require.NoError(t, s.Save(key, Request{Seq: 1, Template: "t", Now: clock}, Response{Status: manifest.StatusCompleted, Summary: "ok"}))
	_, found, err := s.Lookup(key)
	require.NoError(t, err)
	assert.True(t, found)
}

// A store kept inside a run (an A/B session's responses folder in the scratch
// dir) refuses a link planted where its folder or a folder on the way belongs,
// also one swapped in after the folder was made (while an agent ran), and writes
// nothing through it; in real folders it saves, creating the missing ones, and
// Own finds only its own recordings.
func TestStoreInRefusesPlantedLinksAndSavesInRealDirs(t *testing.T) {
	t.Parallel()
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	req, resp := Request{Seq: 1, Template: "t", Now: clock}, Response{Status: manifest.StatusCompleted, Summary: "ok"}
	rel := filepath.Join("replay-worktrees", "s1.ab")
	link := func(t *testing.T, target, at string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(at), 0o755))
		require.NoError(t, os.Symlink(target, at))
	}
	for name, plant := range map[string]func(t *testing.T, s *Store, base, outside string){
		"store folder": func(t *testing.T, _ *Store, base, outside string) { link(t, outside, filepath.Join(base, rel)) },
		"folder on the way": func(t *testing.T, _ *Store, base, outside string) {
			link(t, outside, filepath.Join(base, filepath.Dir(rel)))
		},
		"responses folder": func(t *testing.T, _ *Store, base, outside string) {
			link(t, outside, filepath.Join(base, rel, ResponsesDir))
		},
		"swapped in after a save": func(t *testing.T, s *Store, base, outside string) {
			require.NoError(t, s.Save(key, req, resp))
			require.NoError(t, os.RemoveAll(filepath.Join(base, rel)))
			link(t, outside, filepath.Join(base, rel))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, outside := t.TempDir(), t.TempDir()
			s := OpenStoreIn(base, rel)
			plant(t, s, base, outside)
			err := s.Save(key, req, resp)
			require.ErrorIs(t, err, safewrite.ErrLink)
			assert.Contains(t, err.Error(), "is a symbolic link")
			assert.NotContains(t, err.Error(), "\n")
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written through the link")
		})
	}

	base, fallback := t.TempDir(), t.TempDir()
	require.NoError(t, OpenStore(fallback).Save(key, req, resp))
	s := OpenStoreIn(base, rel).Also(fallback)
	_, found, err := s.Own().Lookup(key)
	require.NoError(t, err)
	assert.False(t, found, "Own does not search the fallbacks")
	_, found, err = s.Lookup(key)
	require.NoError(t, err)
	assert.True(t, found)
	require.NoError(t, s.Own().Save(key, req, resp))
	assert.FileExists(t, filepath.Join(base, rel, ResponsesDir, key+".json"))
}
