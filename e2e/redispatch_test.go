package e2e

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// originalLines is the number of lines of the fixture's manifest (the torn one included).
const originalLines = 40

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

// TestKill9DuringRedispatch kills replay --yes at random points of its runs (5
// kills by default, 20 with REPLAY_STRESS=1), at least one of them while its
// agent works, then checks that no seq was used twice, that every replay seq
// has one dispatched line and at most one final one, and that the next run
// completes the pipeline.
func TestKill9DuringRedispatch(t *testing.T) {
	t.Parallel()
	kills := 5
	if os.Getenv("REPLAY_STRESS") != "" {
		kills = 20
	}
	s, p := pipelineSandbox(t)
	// The agent outlasts the kill window, so every kill lands somewhere in a run
	// (plan, restore, seq reservation, dispatch file, agent call) until the last run.
	started := filepath.Join(p.Root, "agent-started")
	// It commits its work (at the --now instant, so the commit lies in the window of
	// the dispatch): a dispatch that completes without its commit is not done.
	commit := fmt.Sprintf("GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid GIT_AUTHOR_DATE=%s GIT_COMMITTER_DATE=%s git commit -q --allow-empty -m \"feat: task $REPLAY_TASK done\"\n", now(p), now(p))
	ag := writeAgent(t, p, "slow-agent.sh", "touch "+started+"\ncat >/dev/null\nsleep 1\n"+commit+"echo \"SUMMARY: task $REPLAY_TASK done\"\n")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < kills; i++ {
		cmd := s.Command(p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p), "--quiet")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.Intn(700)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	// On a loaded machine a run may not reach its agent within the random delays;
	// then one more run is killed once its agent has started, so some kill lands
	// mid-dispatch.
	if inFlight(t, p) == 0 {
		killOnceAgentStarted(t, s, p, started, p.Scratch, "--yes", "--agent", ag, "--now", now(p), "--quiet")
	}
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	m := readManifest(t, p)
	files := map[int]string{}
	for _, e := range m.Entries {
		if e.Seq <= 19 {
			continue
		}
		if other, dup := files[e.Seq]; dup {
			t.Fatalf("seq %d used twice: %s and %s", e.Seq, other, e.File)
		}
		files[e.Seq] = e.File
		h := m.History[e.Seq]
		require.NotEmpty(t, h)
		assert.Equal(t, manifest.StatusDispatched, h[0], "seq %d starts with dispatched", e.Seq)
		assert.LessOrEqual(t, len(h), 2, "seq %d has one dispatched and at most one final line", e.Seq)
	}
	interrupted := 0
	for seq := range files {
		if len(m.History[seq]) == 1 {
			interrupted++
		}
	}
	t.Logf("%d replay seqs, %d of them interrupted in flight", len(files), interrupted)
	assert.Positive(t, interrupted, "some kills landed mid-dispatch")
	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing to resume", "the pipeline ends complete")
}

// inFlight counts the seqs replay appended whose dispatch has no final line.
func inFlight(t *testing.T, p *fixture.Pipeline) int {
	t.Helper()
	m := readManifest(t, p)
	n := 0
	for seq, h := range m.History {
		if seq > 19 && len(h) == 1 {
			n++
		}
	}
	return n
}

// killOnceAgentStarted starts the binary with args in the project and SIGKILLs it
// as soon as its agent has touched the file started (or when it ends first).
func killOnceAgentStarted(t *testing.T, s *Sandbox, p *fixture.Pipeline, started string, args ...string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(started))
	cmd := s.Command(p.Project, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case <-done:
			t.Fatalf("the run ended before its agent started:\n%s", out.String())
		case <-deadline:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			t.Fatalf("the agent never started:\n%s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}
