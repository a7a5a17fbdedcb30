package e2e

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/s3test"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// slowProxy forwards TCP connections on loopback to target, each direction
// at about rate bytes a second: a slow store. Forwarded counts the bytes
// passed on so far, both ways.
type slowProxy struct {
	Addr      string
	Forwarded atomic.Int64
}

func startSlowProxy(t *testing.T, target string, rate int) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &slowProxy{Addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); p.pipe(out, in, rate) }()
			go func() { defer wg.Done(); p.pipe(in, out, rate) }()
		}
	}()
	return p
}

// pipe copies src to dst in 16 KiB steps, sleeping to keep to rate.
func (p *slowProxy) pipe(dst, src net.Conn, rate int) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			p.Forwarded.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

// signalMidTransfer starts the binary, sends sig once the proxy has passed on
// more than `after` bytes, and returns the result and how long the process
// took to exit after the signal.
func signalMidTransfer(t *testing.T, s *Sandbox, dir string, proxy *slowProxy, after int64, sig os.Signal, args ...string) (Result, time.Duration) {
	t.Helper()
	cmd := s.Command(dir, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := proxy.Forwarded.Load()
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for proxy.Forwarded.Load()-start < after && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(sig))
	sent := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("replay %v ignored %v for 30 s: %s", args, sig, errOut.String())
	}
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: cmd.ProcessState.ExitCode()}, time.Since(sent)
}

// TestShareInterruptMidTransfer: SIGINT during a push and SIGTERM during a
// pull, against an S3 store behind a slow link, stop the binary at once
// (exit 130, one line) leaving nothing behind: no run index in the store, no
// temp bundle; no destination and no temp dir of the pull.
func TestShareInterruptMidTransfer(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	writeLarge(t, filepath.Join(p.Scratch, "recordings", "large.bin"), 24<<20, 3)
	srv := s3test.Start(t)
	srv.MakeBucket(t, "team-runs")
	s.Env = append(srv.Env(), "AWS_EC2_METADATA_DISABLED=true")
	proxy := startSlowProxy(t, srv.Endpoint, 2<<20) // 24 MiB at 2 MiB/s: 12 s a transfer
	slow := "s3://team-runs/slow?endpoint=" + proxy.Addr + "&insecure=1"

	r, took := signalMidTransfer(t, s, p.Project, proxy, 3<<20, syscall.SIGINT, "push", p.Scratch, "--to", slow)
	t.Logf("push stopped %s after SIGINT", took.Round(time.Millisecond))
	assert.Equal(t, 130, r.Code, r.Stderr)
	assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "one line: %q", r.Stderr)
	assert.Contains(t, r.Stderr, "push interrupted: the store's index of the run was not written")
	assert.Less(t, took, 3*time.Second, "a push stops at once (1 s is the goal; slack for a loaded machine)")
	var indexes []string
	require.NoError(t, filepath.Walk(filepath.Join(srv.Root, "team-runs"), func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "index.json" {
			indexes = append(indexes, path)
		}
		return err
	}))
	assert.Empty(t, indexes, "no run in the store")
	tmp, err := os.ReadDir(s.Tmp)
	require.NoError(t, err)
	for _, e := range tmp {
		assert.NotContains(t, e.Name(), "replay-push-bundle", "the temp bundle was removed")
	}

	// The run, pushed whole at full speed, then pulled through the slow link.
	fast := srv.URL("team-runs", "slow")
	r = s.Run(t, p.Project, "push", p.Scratch, "--to", fast)
	require.Equal(t, 0, r.Code, r.Stderr)
	into := filepath.Join(s.Root, "pulled")
	r, took = signalMidTransfer(t, s, p.Project, proxy, 3<<20, syscall.SIGTERM, "pull", slow, "--into", into)
	t.Logf("pull stopped %s after SIGTERM", took.Round(time.Millisecond))
	assert.Equal(t, 130, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "pull interrupted: nothing was written into "+into)
	assert.Less(t, took, 3*time.Second, "a pull stops at once")
	_, err = os.Stat(into)
	assert.True(t, os.IsNotExist(err), "no destination")
	left, err := filepath.Glob(filepath.Join(s.Root, ".replay-pull-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temp dir of the pull")
}

// TestSharePullFIFOObjectNeverBlocks: a directory store whose run index and
// chunk are FIFOs (nobody writes them) fails the binary's pull at once, exit 1,
// never blocking on a read.
func TestSharePullFIFOObjectNeverBlocks(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)
	indexes, err := filepath.Glob(filepath.Join(storeDir, "runs", "*", "index.json"))
	require.NoError(t, err)
	require.Len(t, indexes, 1)
	blobs, err := filepath.Glob(filepath.Join(storeDir, "blobs", "sha256", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, blobs)
	for _, victim := range []string{blobs[0], indexes[0]} {
		saved, err := os.ReadFile(victim)
		require.NoError(t, err)
		require.NoError(t, os.Remove(victim))
		require.NoError(t, testtools.Mkfifo(victim, 0o644))
		run := filepath.Base(filepath.Dir(indexes[0]))
		cmd := s.Command(p.Project, "pull", storeDir, run, "--into", filepath.Join(s.Root, "pulled"))
		var errOut bytes.Buffer
		cmd.Stderr, cmd.Stdout = &errOut, io.Discard
		start := time.Now()
		require.NoError(t, cmd.Start())
		guard := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
		werr := cmd.Wait()
		guard.Stop()
		require.Error(t, werr)
		assert.Less(t, time.Since(start), 15*time.Second, "%s: the pull blocked", victim)
		assert.Equal(t, 1, cmd.ProcessState.ExitCode(), errOut.String())
		assert.Contains(t, errOut.String(), "not a regular file")
		_, err = os.Stat(filepath.Join(s.Root, "pulled"))
		assert.True(t, os.IsNotExist(err))
		require.NoError(t, os.Remove(victim))
		require.NoError(t, os.WriteFile(victim, saved, 0o644))
	}
}
