package e2e

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runMeasured runs the binary and returns its result and peak RSS in bytes
// (runRSS: the child of a fresh, small process).
func runMeasured(t *testing.T, s *Sandbox, dir string, args ...string) (Result, int64) {
	t.Helper()
	return runRSS(t, s, dir, args...)
}

// TestLargeFileStaysOutOfMemory checkpoints and restores a large file and checks the
// peak RSS of the process grows far less than the file's size over a run without
// it (limit: half the file's size). The default run uses a 32 MiB file of
// incompressible bytes (the same streaming paths as any size: growth measured
// at 1-2 MiB whatever the size), REPLAY_CHECKPOINT_MIB sets another size (.ci/run
// runs 128 MiB in a step of its own); REPLAY_STRESS=1 adds a 1 GiB sparse file.
func TestLargeFileStaysOutOfMemory(t *testing.T) {
	t.Parallel()
	type size struct {
		name   string
		size   int64
		sparse bool
		limit  int64
	}
	mib := int64(32)
	if v, err := strconv.ParseInt(os.Getenv("REPLAY_CHECKPOINT_MIB"), 10, 64); err == nil && v > 0 {
		mib = v
	}
	sizes := []size{{strconv.FormatInt(mib, 10) + " MiB", mib << 20, false, mib << 19}}
	if os.Getenv("REPLAY_STRESS") != "" {
		sizes = append(sizes, size{"1 GiB sparse", 1 << 30, true, 64 << 20})
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			s := NewSandbox(t)
			dir, _ := cpProject(t, s)
			shadow := filepath.Join(s.Root, "shadow")
			big := filepath.Join(dir, "big.bin")
			writeBig(t, big, sz.size, sz.sparse)
			flags := []string{"--repo", dir, "--shadow", shadow, "--now", "2026-04-07T15:00:00Z"}
			small := filepath.Join(dir, "internal")
			br, baseline := runMeasured(t, s, small, "checkpoint", "create", "--reason", "baseline", "--repo", small, "--shadow", filepath.Join(s.Root, "baseline"))
			require.Equal(t, 0, br.Code, br.Stderr)
			t.Logf("baseline: a checkpoint of a small tree peaks at %d MiB", baseline>>20)

			r, rss := runMeasured(t, s, dir, append([]string{"checkpoint", "create", "--reason", "pre-wave-1"}, flags...)...)
			require.Equal(t, 0, r.Code, r.Stderr)
			t.Logf("checkpoint create of %s: peak RSS %d MiB", sz.name, rss>>20)
			assert.Less(t, rss-baseline, sz.limit, "checkpoint create holds the file in memory")

			for _, packed := range []bool{false, true} {
				if packed {
					// After a git gc of the shadow repository the blob is in a pack.
					// Stored without compression: the restore reads a packed blob
					// the same way, and git does not spend seconds deflating
					// 128 MiB of noise.
					s.GitOut(t, dir, "-c", "pack.compression=0", "--git-dir="+shadow, "repack", "-adq")
				}
				require.NoError(t, os.Remove(big))
				r, rss = runMeasured(t, s, dir, append([]string{"checkpoint", "restore", "pre-wave-1", "--yes"}, flags...)...)
				require.Equal(t, 0, r.Code, r.Stderr)
				t.Logf("checkpoint restore of %s (packed: %t): peak RSS %d MiB", sz.name, packed, rss>>20)
				assert.Less(t, rss-baseline, sz.limit, "restore holds the file in memory")
				info, err := os.Stat(big)
				require.NoError(t, err)
				assert.Equal(t, sz.size, info.Size())
			}
		})
	}
}

// writeBig writes a file of size bytes: a sparse hole, or pseudo-random bytes that
// do not compress. Every MiB is the same pseudo-random MiB rotated by a different
// offset: deflate's 32 KiB window finds nothing to shorten, and the test process
// (race-instrumented) computes one MiB instead of all of them.
func writeBig(t *testing.T, path string, size int64, sparse bool) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	if sparse {
		require.NoError(t, f.Truncate(size))
		return
	}
	block := randomMiB()
	for k, written := 0, int64(0); written < size; k, written = k+1, written+int64(len(block)) {
		off := (k * 40961) % len(block)
		_, err := f.Write(block[off:])
		require.NoError(t, err)
		_, err = f.Write(block[:off])
		require.NoError(t, err)
	}
}

// randomMiB returns one MiB of xorshift bytes, computed once.
var randomMiB = sync.OnceValue(func() []byte {
	buf := make([]byte, 1<<20)
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i+8 <= len(buf); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(buf[i:], x) // byte k is x >> (8 * k)
	}
	return buf
})

// TestSecondReplayOnAProjectIsRefused holds the project's lock with a resume whose
// agent is slow, and checks that a second resume and a checkpoint create wait, then
// stop with exit 3 naming the first one's pid, changing nothing.
func TestSecondReplayOnAProjectIsRefused(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	gate, release := filepath.Join(p.Root, "agent-started"), filepath.Join(p.Root, "agent-release")
	slow := writeAgent(t, p, "slow-agent.sh", "touch "+gate+"\ncat >/dev/null\nn=0\nwhile [ ! -f "+release+" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done\necho SUMMARY: done\n")
	first := s.Command(p.Project, p.Scratch, "--yes", "--agent", slow, "--now", now(p))
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	require.NoError(t, first.Start())
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(gate); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the first resume ended early: %v\n%s", err, firstOut.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "the first resume never reached its agent")
		time.Sleep(20 * time.Millisecond)
	}
	manifestBefore := readFile(t, p.ManifestPath)
	pid := strconv.Itoa(first.Process.Pid)

	// The checkpoint create waits for the lock while the second resume does
	// (each waits the whole lock wait before it gives up).
	createCmd := s.Command(p.Project, "checkpoint", "create", "--reason", "manual-1", "--now", now(p))
	var createErr bytes.Buffer
	createCmd.Stderr = &createErr
	require.NoError(t, createCmd.Start())
	start := time.Now()
	second := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the second one waits before giving up")
	assert.Equal(t, 3, second.Code, second.Stderr)
	assert.Contains(t, second.Stderr, "another replay is running (pid "+pid+")")

	_ = createCmd.Wait()
	assert.Equal(t, 3, createCmd.ProcessState.ExitCode(), createErr.String())
	assert.Contains(t, createErr.String(), "another replay is running (pid "+pid+")")
	assert.True(t, manifestBefore == readFile(t, p.ManifestPath), "the refused runs appended nothing")

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	require.NoError(t, <-done, firstOut.String())
	create := s.Run(t, p.Project, "checkpoint", "create", "--reason", "manual-1", "--now", now(p))
	assert.Equal(t, 0, create.Code, create.Stderr)
}

// TestTwoRestoresRunOneAfterTheOther starts two restores of one checkpoint at once:
// the second waits for the first, then finds the tree already at the checkpoint, so
// both succeed, only the first takes a safety checkpoint and leaves a pre-restore
// ref, and the second says it had nothing to do.
func TestTwoRestoresRunOneAfterTheOther(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir, _ := cpProject(t, s)
	shadow := filepath.Join(s.Root, "shadow")
	flags := []string{"--repo", dir, "--shadow", shadow, "--now", "2026-04-07T15:00:00Z"}
	r := s.Run(t, dir, append([]string{"checkpoint", "create", "--reason", "pre-wave-1"}, flags...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	writeBig(t, filepath.Join(dir, "big.bin"), 32<<20, false)
	writeFile(t, dir, "wip.txt", "work in progress\n", 0o644)

	cmds := make([]*exec.Cmd, 2)
	outs := make([]*bytes.Buffer, 2)
	for i := range cmds {
		cmds[i] = s.Command(dir, append([]string{"checkpoint", "restore", "pre-wave-1", "--yes"}, flags...)...)
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		require.NoError(t, cmds[i].Start())
	}
	// The second waits DefaultLockWait (3 s) for the first; on a machine slow
	// enough that the first takes longer, the second refuses (exit 3, nothing
	// changed) and, run again as its message says, has nothing to do: the two
	// never restore at once either way.
	for i, c := range cmds {
		err := c.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 && strings.Contains(outs[i].String(), "another replay is running") {
			t.Logf("restore %d refused while the other held the lock: %s", i, outs[i].String())
			continue
		}
		require.NoError(t, err, outs[i].String())
	}
	for i, c := range cmds {
		if c.ProcessState.ExitCode() == 3 {
			again := s.Run(t, dir, append([]string{"checkpoint", "restore", "pre-wave-1", "--yes"}, flags...)...)
			require.Equal(t, 0, again.Code, again.Stderr)
			outs[i].Reset()
			outs[i].WriteString(again.Stdout + again.Stderr)
		}
	}
	refs := s.GitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/replay/pre-restore/")
	assert.Len(t, strings.Fields(refs), 1, "only the restore that changed something kept a ref: %s", refs)
	assert.NoFileExists(t, filepath.Join(dir, "wip.txt"))
	list := s.Run(t, dir, append([]string{"checkpoint", "list"}, flags...)...)
	require.Equal(t, 0, list.Code, list.Stderr)
	assert.Equal(t, 1, strings.Count(list.Stdout, "pre-restore-safety"))
	assert.NotEqual(t, strings.Contains(outs[0].String(), "Already at checkpoint"), strings.Contains(outs[1].String(), "Already at checkpoint"), "exactly one restore, the second, had nothing to do")
	// The first safety checkpoint holds the work in progress; the undo of it brings it back.
	m := regexp.MustCompile(`Safety checkpoint ([0-9a-f]{8})`)
	var withWIP []string
	for _, o := range outs {
		if sm := m.FindStringSubmatch(o.String()); sm != nil {
			files := s.GitOut(t, dir, "--git-dir="+shadow, "ls-tree", "-r", "--name-only", sm[1])
			if strings.Contains(files, "wip.txt") {
				withWIP = append(withWIP, sm[1])
			}
		}
	}
	require.Len(t, withWIP, 1, "exactly one safety checkpoint saw the work in progress")
	u := s.Run(t, dir, append([]string{"checkpoint", "restore", withWIP[0], "--yes"}, flags...)...)
	require.Equal(t, 0, u.Code, u.Stderr)
	assert.Equal(t, "work in progress\n", readFile(t, filepath.Join(dir, "wip.txt")))
}
