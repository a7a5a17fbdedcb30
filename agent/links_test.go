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
