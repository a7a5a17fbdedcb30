package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// Keys as a terminal sends them.
const (
	keyEnter = "\r"
	keyDown  = "\x1b[B"
	keyUp    = "\x1b[A"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
)

// ptyRun is the binary running on a pseudo-terminal: stdin, stdout and stderr are
// the terminal, as in a user's shell.
type ptyRun struct {
	t    *testing.T
	tty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	code int
}

// startPTY starts the binary on a new pseudo-terminal with the sandbox environment
// minus REPLAY_PROMPT_DISABLED, so it prompts; NO_COLOR stays set. It skips the test
// when the system has no pseudo-terminals.
func startPTY(t *testing.T, s *Sandbox, dir string, args ...string) *ptyRun {
	t.Helper()
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skipf("no pseudo-terminals on this system: %v", err)
	}
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	for _, kv := range s.Environ() {
		if !strings.HasPrefix(kv, "REPLAY_PROMPT_DISABLED=") && !strings.HasPrefix(kv, "CI=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 220})
	require.NoError(t, err)
	r := &ptyRun{t: t, tty: tty, cmd: cmd, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		answered := 0
		for {
			n, err := tty.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			screen := r.out.String()
			r.mu.Unlock()
			answered = answerQueries(tty, screen, answered)
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			r.code = exitErr.ExitCode()
		} else if err != nil {
			r.code = -1
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
		tty.Close()
	})
	return r
}

// terminalQueries are the questions a program asks its terminal at start (the
// background colour, then the cursor position as a sentinel: bubbletea asks both
// when it is loaded), with the answers a dark terminal gives. A terminal that never
// answers costs the program a 5 s time-out; real terminals answer at once.
var terminalQueries = [][2]string{
	{"\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
	{"\x1b[6n", "\x1b[1;1R"},
}

// answerQueries answers, like a terminal, the queries in screen after the first
// answered ones, in the order they were asked, and returns how many are answered now.
func answerQueries(tty *os.File, screen string, answered int) int {
	asked := 0
	for rest := screen; ; asked++ {
		i, q := firstQuery(rest)
		if i < 0 {
			return answered
		}
		if asked >= answered {
			_, _ = tty.WriteString(terminalQueries[q][1])
			answered++
		}
		rest = rest[i+len(terminalQueries[q][0]):]
	}
}

// firstQuery returns where the first terminal query in s starts and which one it
// is, or -1.
func firstQuery(s string) (int, int) {
	at, which := -1, -1
	for q, qa := range terminalQueries {
		if i := strings.Index(s, qa[0]); i >= 0 && (at < 0 || i < at) {
			at, which = i, q
		}
	}
	return at, which
}

// screen returns everything written to the terminal so far.
func (r *ptyRun) screen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor waits until the terminal shows want, failing after a timeout.
func (r *ptyRun) waitFor(want string) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(r.screen(), want) {
			return
		}
		select {
		case <-r.done:
			if strings.Contains(r.screen(), want) {
				return
			}
			r.t.Fatalf("replay exited (code %d) without showing %q; the terminal showed:\n%s", r.code, want, r.screen())
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.t.Fatalf("the terminal never showed %q; it showed:\n%s", want, r.screen())
}

// send types keys, one key at a time as a user would.
func (r *ptyRun) send(keys ...string) {
	r.t.Helper()
	for _, k := range keys {
		_, err := r.tty.WriteString(k)
		require.NoError(r.t, err)
		time.Sleep(80 * time.Millisecond)
	}
}

// exit waits for the binary to end and returns its exit code.
func (r *ptyRun) exit() int {
	r.t.Helper()
	select {
	case <-r.done:
		time.Sleep(50 * time.Millisecond) // let the reader drain the last output
		return r.code
	case <-time.After(60 * time.Second):
		r.t.Fatalf("replay did not exit; the terminal showed:\n%s", r.screen())
	}
	return -1
}

// TestRestorePromptInATerminal drives the real restore confirmation: the preview is
// on screen with the untracked file flagged, the cursor starts on "No" and is marked
// in text (NO_COLOR), and every way out but "Yes" changes nothing.
func TestRestorePromptInATerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keys     []string
		wantCode int
	}{
		{"enter takes the default no", []string{keyEnter}, 3},
		{"esc aborts", []string{keyEsc}, 3},
		{"ctrl-c exits 130", []string{keyCtrlC}, 130},
		{"down then up then enter is no", []string{keyDown, keyUp, keyEnter}, 3},
		{"down then enter restores", []string{keyDown, keyEnter}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			mywork := filepath.Join(p.Project, "mywork.txt")
			require.NoError(t, os.WriteFile(mywork, []byte("my own notes\n"), 0o644))
			before := digest(t, p.Root)

			r := startPTY(t, s, p.Project, p.Scratch, "--now", now(p))
			r.waitFor("> No (change nothing)")
			screen := r.screen()
			assert.Contains(t, screen, "mywork.txt  [untracked]")
			assert.Contains(t, screen, "pre-restore-safety checkpoint")
			assert.NotContains(t, screen, "\x1b[3", "no colour with NO_COLOR")
			r.send(tt.keys...)
			code := r.exit()
			assert.Equal(t, tt.wantCode, code, r.screen())
			if tt.wantCode != 0 {
				assert.Equal(t, before, digest(t, p.Root), "nothing changed")
				assert.FileExists(t, mywork)
				return
			}
			assert.NoFileExists(t, mywork, "restored: the checkpoint has no mywork.txt")
			assert.Contains(t, r.screen(), "===COMPRESSION_STATE===")
			undo := s.Run(t, p.Project, "checkpoint", "restore", "pre-restore-safety", "--yes", "--now", now(p))
			require.Equal(t, 0, undo.Code, undo.Stderr)
			assert.FileExists(t, mywork, "the undo brings mywork.txt back")
		})
	}
}

// TestNoBoundaryMenuInATerminal drives the menu shown when verification fails back
// to the start: the cursor starts on abort, Enter and Esc abort (3), Ctrl-C exits
// 130, and choosing the disk state explicitly yields a block that is not GREEN.
func TestNoBoundaryMenuInATerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keys     []string
		wantCode int
	}{
		{"enter takes abort", []string{keyEnter}, 3},
		{"esc aborts", []string{keyEsc}, 3},
		{"ctrl-c exits 130", []string{keyCtrlC}, 130},
		{"disk state is an explicit choice", []string{keyUp, keyUp, keyEnter}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, p := pipelineSandbox(t)
			removeEvidenceOf(t, p, 1)
			before := digest(t, p.Root)

			r := startPTY(t, s, p.Project, p.Scratch, "--now", now(p))
			r.waitFor("> Abort (change nothing)")
			r.send(tt.keys...)
			code := r.exit()
			assert.Equal(t, tt.wantCode, code, r.screen())
			if tt.wantCode != 0 {
				assert.Equal(t, before, digest(t, p.Root), "nothing changed")
				return
			}
			screen := r.screen()
			assert.Contains(t, screen, "===COMPRESSION_STATE===")
			assert.NotContains(t, screen, "Health: GREEN")
			assert.NotContains(t, screen, "prior work verified through seq")
			assert.Contains(t, screen, "NOTHING was verified")
		})
	}
}

// removeEvidenceOf deletes the output files and receipts of seq: its work can no
// longer be proven, so verification fails back to the start.
func removeEvidenceOf(t *testing.T, p *fixture.Pipeline, seq int) {
	t.Helper()
	for _, dir := range []string{p.DurableDispatchDir, p.LiveDispatchDir} {
		matches, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(seq)+"-*-*.md"))
		require.NoError(t, err)
		for _, m := range matches {
			require.NoError(t, os.Remove(m))
		}
		ledger := filepath.Join(dir, "receipt-ledger.jsonl")
		data, err := os.ReadFile(ledger)
		require.NoError(t, err)
		var kept []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if !strings.Contains(l, `"dispatch_id":"`+strconv.Itoa(seq)+`-`) {
				kept = append(kept, l)
			}
		}
		require.NoError(t, os.WriteFile(ledger, []byte(strings.Join(kept, "")), 0o644))
	}
}

// TestInterruptDuringRedispatchExits130 sends SIGINT (what Ctrl-C sends outside a
// prompt) while an agent runs: the run stops with exit code 130 and says how to go on.
func TestInterruptDuringRedispatchExits130(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	started := filepath.Join(p.Root, "agent-started")
	ag := writeAgent(t, p, "slow-agent.sh", fmt.Sprintf("touch %q\ncat >/dev/null\nsleep 20\necho \"SUMMARY: done\"\n", started))
	cmd := s.Command(p.Project, p.Scratch, "--yes", "--agent", ag, "--now", now(p))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the agent never started; stderr:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, errOut.String())
		assert.Equal(t, 130, exitErr.ExitCode(), errOut.String())
		assert.Contains(t, errOut.String(), "interrupted during the re-dispatch")
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("replay did not stop on SIGINT; stderr:\n%s", errOut.String())
	}
}
