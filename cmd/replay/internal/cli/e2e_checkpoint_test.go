package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

func TestCheckpointCreateListShowRestore(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir, _ := cpProject(t, s)

	r := s.Run(t, dir, "checkpoint", "create", "--reason", "pre-wave-1", "--source", "build", "--now", "2026-04-07T14:50:00Z")
	require.Equal(t, 0, r.Code, r.Stderr)
	shadow := paths.ShadowDir(s.Home, dir)
	_, err := os.Stat(filepath.Join(shadow, "HEAD"))
	require.NoError(t, err, "the shadow repository is at the SPEC §2 path")
	_, err = os.Stat(paths.CheckpointManifest(shadow))
	require.NoError(t, err)

	writeFile(t, dir, "main.go", "package main // wave 1\n", 0o644)
	writeFile(t, dir, "internal/auth/b.go", "package auth // new\n", 0o644)
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o644))
	r = s.Run(t, dir, "checkpoint", "create", "--reason", "pre-wave-2", "--source", "build", "--now", "2026-04-07T15:10:00Z")
	require.Equal(t, 0, r.Code, r.Stderr)

	r = s.Run(t, dir, "checkpoint", "list")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `\| [0-9a-f]{8} \| 2026-04-07 14:50:00Z \| pre-wave-1 \| build  \| [0-9a-f]{8}     \|`, r.Stdout)
	assert.Contains(t, r.Stdout, "pre-wave-2")

	r = s.Run(t, dir, "checkpoint", "show", "pre-wave-2")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "1 added, 2 modified, 0 deleted")

	// Without a terminal and without --yes nothing happens.
	before, err := fixture.Digest(s.Root)
	require.NoError(t, err)
	r = s.Run(t, dir, "checkpoint", "restore", "pre-wave-1")
	assert.Equal(t, 3, r.Code)
	assert.Contains(t, r.Stderr, "pass --yes")
	after, err := fixture.Digest(s.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed")

	writeFile(t, dir, "later.log", "ignored, must survive\n", 0o644)
	r = s.Run(t, dir, "checkpoint", "restore", "pre-wave-1", "--yes", "--now", "2026-04-07T16:00:00Z")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "2 files written, 1 removed")
	assert.Contains(t, r.Stderr, "refs/replay/pre-restore/1775577600")
	assert.Equal(t, "package main\n", readFile(t, filepath.Join(dir, "main.go")))
	_, err = os.Stat(filepath.Join(dir, "internal/auth/b.go"))
	assert.True(t, os.IsNotExist(err))
	info, err := os.Stat(filepath.Join(dir, "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm())
	assert.Equal(t, "ignored, must survive\n", readFile(t, filepath.Join(dir, "later.log")))
	assert.Equal(t, "module.exports = 1\n", readFile(t, filepath.Join(dir, "node_modules/x/i.js")))

	// The printed undo command brings the pre-restore tree back.
	undo := regexp.MustCompile(`Undo: replay (checkpoint restore [0-9a-f]{8}) --yes`).FindStringSubmatch(r.Stdout)
	require.Len(t, undo, 2, r.Stdout)
	args := append(strings.Fields(undo[1]), "--yes", "--now", "2026-04-07T16:05:00Z")
	r = s.Run(t, dir, args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "package main // wave 1\n", readFile(t, filepath.Join(dir, "main.go")))
	assert.Equal(t, "package auth // new\n", readFile(t, filepath.Join(dir, "internal/auth/b.go")))
}

func TestCheckpointRestoreBranchGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		branch string
		code   int
	}{{"main", 3}, {"feat/login", 0}}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			s := NewSandbox(t)
			dir, _ := cpProject(t, s)
			r := s.Run(t, dir, "checkpoint", "create", "--reason", "pre-wave-1")
			require.Equal(t, 0, r.Code, r.Stderr)
			writeFile(t, dir, "main.go", "package main // changed\n", 0o644)
			scratch := paths.ScratchDir(s.Home, dir)
			marker := map[string]string{"pipeline_id": "1775430161", "skill": "build", "phase": "3", "start_time": "2026-04-07T14:00:00Z",
				"scratch_dir": scratch, "dispatch_dir": filepath.Join(s.Tmp, "crucible-dispatch-1775430161"), "branch": tt.branch, "baseline_sha": "abc"}
			data, err := json.Marshal(marker)
			require.NoError(t, err)
			writeFile(t, scratch, ".pipeline-active", string(data), 0o644)
			before, err := fixture.Digest(s.Root)
			require.NoError(t, err)

			r = s.Run(t, dir, "checkpoint", "restore", "pre-wave-1", "--yes")
			assert.Equal(t, tt.code, r.Code, r.Stderr)
			if tt.code == 0 {
				assert.Equal(t, "package main\n", readFile(t, filepath.Join(dir, "main.go")))
				return
			}
			assert.Contains(t, r.Stderr, "Pipeline was running on branch main but you are on feat/login. Switch to main before resuming")
			after, err := fixture.Digest(s.Root)
			require.NoError(t, err)
			assert.Equal(t, before, after, "not one file or ref changed")
		})
	}
}

// TestCheckpointForeignShadow reads a shadow repository written by the git binary:
// subjects only, no Project-Head trailer, no checkpoint-manifest.md.
func TestCheckpointForeignShadow(t *testing.T) {
	t.Parallel()
	testtools.Git(t, "git binary not installed")
	s := NewSandbox(t)
	dir, _ := cpProject(t, s)
	shadow := filepath.Join(s.Root, "foreign-shadow")
	git := func(date string, args ...string) {
		cmd := exec.Command("git", append([]string{"--git-dir=" + shadow, "--work-tree=" + dir}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+s.Home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=c", "GIT_AUTHOR_EMAIL=c@x",
			"GIT_COMMITTER_NAME=c", "GIT_COMMITTER_EMAIL=c@x", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("2026-04-07T14:10:00Z", "init", "-q")
	for i, reason := range []string{"pre-wave-1", "pre-wave-10", "pre-wave-2", "pre-wave-2"} {
		writeFile(t, dir, "progress.txt", reason+string(rune('a'+i)), 0o644)
		date := time.Date(2026, 4, 7, 14, 10+i, 0, 0, time.UTC).Format(time.RFC3339)
		git(date, "add", "-A")
		git(date, "commit", "-q", "-m", reason+" | "+strings.Replace(date[:19], "T", " ", 1)+" | build")
	}
	r := s.Run(t, dir, "checkpoint", "list", "--shadow", shadow, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Checkpoints []struct {
			Short       string `json:"short"`
			Reason      string `json:"reason"`
			ProjectHead string `json:"project_head"`
			InManifest  bool   `json:"in_manifest"`
		} `json:"checkpoints"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.Len(t, doc.Checkpoints, 4)
	assert.Equal(t, "pre-wave-10", doc.Checkpoints[1].Reason)
	assert.Empty(t, doc.Checkpoints[0].ProjectHead)
	assert.False(t, doc.Checkpoints[0].InManifest)
	require.Len(t, doc.Warnings, 1)
	assert.Contains(t, doc.Warnings[0], "checkpoint-manifest.md not found")

	r = s.Run(t, dir, "checkpoint", "show", "pre-wave-2", "--shadow", shadow)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Checkpoint:   "+doc.Checkpoints[3].Short, "a retried pre-wave-2 resolves to the newest")
	assert.Contains(t, r.Stdout, "(inferred: newest project commit not later than the checkpoint)")
	r = s.Run(t, dir, "checkpoint", "show", "pre-wave-1", "--shadow", shadow)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "Checkpoint:   "+doc.Checkpoints[0].Short, "pre-wave-1 never matches pre-wave-10")

	r = s.Run(t, dir, "checkpoint", "restore", "pre-wave-1", "--shadow", shadow, "--yes")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "pre-wave-1a", readFile(t, filepath.Join(dir, "progress.txt")))
}
