package e2e

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// killRounds is how many times each writing command is killed: a short loop by
// default, a long one with REPLAY_STRESS=1.
func killRounds() int {
	if os.Getenv("REPLAY_STRESS") == "1" {
		return 40
	}
	return 2
}

// killAtRandom starts the binary with args in dir and SIGKILLs it after a random
// delay below maxDelay (it may have finished by then).
func killAtRandom(t *testing.T, s *Sandbox, rng *rand.Rand, maxDelay time.Duration, dir string, args ...string) {
	t.Helper()
	cmd := s.Command(dir, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	time.Sleep(time.Duration(rng.Int63n(int64(maxDelay))))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	assert.NotContains(t, out.String(), "panic", "replay %v", args)
}

// TestKill9EveryWritingCommand kills each command that writes at random points, then
// checks that a rerun succeeds and that no manifest line was damaged.
func TestKill9EveryWritingCommand(t *testing.T) {
	t.Parallel()
	commands := []struct {
		name string
		args func(t *testing.T, p *fixture.Pipeline, i int) []string
	}{
		{"resume --yes", func(_ *testing.T, p *fixture.Pipeline, _ int) []string {
			return []string{p.Scratch, "--yes", "--now", now(p), "--quiet"}
		}},
		{"manifest before/after", func(_ *testing.T, p *fixture.Pipeline, i int) []string {
			// Even rounds record a dispatch, odd rounds its end.
			seq := strconv.Itoa(100 + i/2)
			if i%2 == 0 {
				return []string{"manifest", "before", "--dir", filepath.Dir(p.ManifestPath), "--seq", seq, "--file", seq + "-cleanup.md", "--role", "cleanup", "--phase", "3", "--model-tier", "opus"}
			}
			return []string{"manifest", "after", "--dir", filepath.Dir(p.ManifestPath), "--seq", seq, "--status", "completed", "--summary", "done"}
		}},
		{"A/B --diff", func(_ *testing.T, p *fixture.Pipeline, _ int) []string {
			return []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + filepath.Join(p.Templates, "build-reviewer-prompt.md"), "--templates", p.Templates, "--diff", "--agent", "builtin:sim", "--now", now(p), "--quiet"}
		}},
		{"checkpoint create", func(t *testing.T, p *fixture.Pipeline, i int) []string {
			writeFile(t, p.Project, fmt.Sprintf("kill9-%d.txt", i), "round "+strconv.Itoa(i)+"\n", 0o644)
			return []string{"checkpoint", "create", "--reason", "kill9-" + strconv.Itoa(i), "--now", now(p)}
		}},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			original, err := os.ReadFile(p.ManifestPath)
			require.NoError(t, err)
			rng := rand.New(rand.NewSource(int64(len(c.name))))
			for i := 0; i < killRounds(); i++ {
				killAtRandom(t, s, rng, 400*time.Millisecond, p.Project, c.args(t, p, i)...)
			}
			r := runGuarded(t, s, p.Project, c.args(t, p, killRounds())...)
			require.Equal(t, 0, r.Code, "the rerun after the kills succeeds\n%s", r.Stderr)
			assertManifestSound(t, p, original)
		})
	}
}

func TestKill9ManifestCleanup(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := mkDispatchDir(t, s)
	scratch := filepath.Join(s.Home, "scratch")
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	var lines bytes.Buffer
	for seq := 1; seq <= 300; seq++ {
		fmt.Fprintf(&lines, `{"seq":%d,"status":"completed","summary":"dispatch %d"}`+"\n", seq, seq)
		writeAt(t, dir, fmt.Sprintf("%d-x.md", seq), fmt.Sprintf("# Dispatch %d\n", seq))
	}
	writeAt(t, dir, "manifest.jsonl", lines.String())
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < killRounds(); i++ {
		if _, err := os.Stat(dir); err != nil {
			break // a run got through to the end
		}
		killAtRandom(t, s, rng, 150*time.Millisecond, "", "manifest", "cleanup", "--dir", dir, "--scratch", scratch, "--failed")
	}
	if _, err := os.Stat(dir); err == nil {
		r := runGuarded(t, s, "", "manifest", "cleanup", "--dir", dir, "--scratch", scratch, "--failed")
		require.Equal(t, 0, r.Code, "the rerun after the kills succeeds\n%s", r.Stderr)
	}
	dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
	data, err := os.ReadFile(filepath.Join(dest, "manifest.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, lines.String(), string(data), "the durable manifest is whole")
	for seq := 1; seq <= 300; seq++ {
		assert.FileExists(t, filepath.Join(dest, fmt.Sprintf("%d-x.md", seq)))
	}
}
