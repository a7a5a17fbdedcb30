package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
)

// AgentLogsDir is the subdirectory of a dispatch directory that holds agents' stderr logs.
const AgentLogsDir = "agent-logs"

// waitDelay bounds how long a finished or killed agent's stdout may stay open (held
// by a child that escaped its process group) before it is closed on it.
const waitDelay = 2 * time.Second

// tiedScript runs the agent command ($1) as a child of a shell that leads the
// agent's process group and kills that whole group when replay dies: on SIGTERM
// (the parent-death signal platform.TieToParent asks the kernel for) and, where
// there is no such signal, when a watcher sees replay's pid ($PPID) gone. The
// command keeps the shell's stdin (fd 3: an asynchronous list's own stdin is
// /dev/null) and its exit status, a death by signal re-raised.
var tiedScript = func() string {
	watch := ""
	if !platform.ParentDeathSignal {
		watch = `(while kill -0 "$PPID" 2>/dev/null; do sleep 1; done; kill -KILL 0) </dev/null >/dev/null 2>&1 &
`
	}
	return `trap 'kill -KILL 0' TERM HUP
` + watch + `exec 3<&0
sh -c "$1" <&3 3<&- &
wait $! 2>/dev/null
st=$?
if [ "$st" -gt 128 ]; then trap - TERM HUP; kill -s "$(kill -l "$st")" $$; fi
exit "$st"
`
}()

// commandAgent runs a shell command with the agent protocol of SPEC §5.
type commandAgent struct {
	cmd     string
	timeout time.Duration
	env     []string
}

func (a *commandAgent) Name() string { return a.cmd }

// StderrLogPath returns where an agent's stderr for req is kept:
// <dispatchDir>/agent-logs/<seq>-<template>.stderr.log.
func StderrLogPath(req Request) string {
	return filepath.Join(req.DispatchDir, AgentLogsDir, strconv.Itoa(req.Seq)+"-"+safeName(req.Template)+".stderr.log")
}

// Prompt returns the pointer prompt a command agent reads on stdin.
func Prompt(req Request) string {
	return fmt.Sprintf("Read and follow the dispatch file at %s.\nDispatch: %d-%s | Role: %s | Phase: %s | Task: %s\nWhen done, print a one-line summary (SUMMARY: ...) as the last line.\n",
		req.DispatchFile, req.Seq, req.Template, orDash(req.Role), orDash(req.Phase), taskText(req.Task, "-"))
}

// Environ returns the REPLAY_* variables a command agent gets on top of its parent's
// environment. REPLAY_PHASE and REPLAY_TASK are empty when the dispatch has none.
func Environ(req Request) []string {
	return []string{
		"REPLAY_DISPATCH_FILE=" + req.DispatchFile,
		"REPLAY_SEQ=" + strconv.Itoa(req.Seq),
		"REPLAY_ROLE=" + req.Role,
		"REPLAY_PHASE=" + req.Phase,
		"REPLAY_TASK=" + taskText(req.Task, ""),
		"REPLAY_DISPATCH_DIR=" + req.DispatchDir,
		"REPLAY_SESSION=" + req.Session,
	}
}

// Run runs the command with sh -c in req.WorkDir in its own process group, which is
// killed as a whole on timeout or cancellation and as soon as the command exits, so
// background children never outlive their dispatch.
func (a *commandAgent) Run(ctx context.Context, req Request) (Response, error) {
	resp := Response{Agent: a.Name()}
	logf, err := openStderrLog(req)
	if err != nil {
		return resp, err
	}
	defer logf.Close()

	timeout := req.Timeout
	if timeout == 0 {
		timeout = a.timeout
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	start := req.now()
	out, waitErr, err := a.run(runCtx, req, logf)
	if err != nil {
		return resp, err
	}
	resp.DurationS = elapsed(start, req.now())
	out.fill(&resp)

	var exitErr *exec.ExitError
	switch {
	case timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		resp.Status, resp.Reason = manifest.StatusError, "agent timed out after "+timeout.String()
	case ctx.Err() != nil:
		resp.Status, resp.Reason = manifest.StatusError, "agent interrupted: "+ctx.Err().Error()
	case waitErr == nil || errors.Is(waitErr, exec.ErrWaitDelay):
		resp.Status = manifest.StatusCompleted
		if out.first == "" {
			resp.Reason = "agent printed nothing"
		}
	case errors.As(waitErr, &exitErr):
		resp.Status, resp.Reason = manifest.StatusFailed, exitReason(exitErr)
		if last := lastLine(StderrLogPath(req)); last != "" {
			resp.Reason += ": " + last
		}
	default:
		resp.Status, resp.Reason = manifest.StatusError, "agent run failed: "+waitErr.Error()
	}
	return resp, nil
}

// openStderrLog creates the dispatch's agent stderr log through the dispatch dir as
// a root: a symlinked agent-logs/ or log file planted in the run is refused, never
// written through.
func openStderrLog(req Request) (*os.File, error) {
	logPath := StderrLogPath(req)
	rel, err := filepath.Rel(req.DispatchDir, logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", logPath, err)
	}
	logf, err := safewrite.OpenInRoot(req.DispatchDir, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: cannot create the agent's stderr log: %w", req.ID(), err)
	}
	return logf, nil
}

// run starts the command, captures its stdout and waits for it: waitErr is the
// command's own ending, err a failure to start it.
func (a *commandAgent) run(ctx context.Context, req Request, stderr *os.File) (out *capture, waitErr, err error) {
	// stdout goes through a pipe we read ourselves, so the agent's exit (not the
	// closing of its stdout by children it left behind) ends the run.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("dispatch %s: cannot create a pipe for the agent's stdout: %w", req.ID(), err)
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, "sh", "-c", tiedScript, "replay-agent", a.cmd)
	cmd.Dir = req.WorkDir
	cmd.Env = append(a.environ(), Environ(req)...)
	cmd.Stdin = strings.NewReader(Prompt(req))
	cmd.Stdout = pw
	cmd.Stderr = stderr
	platform.TieToParent(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay

	// The parent-death signal follows the thread that started the agent: keep it
	// until the agent has ended.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	pw.Close() // the agent holds the write end now
	if err != nil && ctx.Err() != nil {
		// Interrupted (or timed out) before the agent could start: the
		// dispatch ends as interrupted, like one stopped while running.
		return newCapture(MaxOutputBytes), ctx.Err(), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("dispatch %s: cannot start the agent %q in %s: %w", req.ID(), a.cmd, req.WorkDir, err)
	}
	record := writeAgentRecord(req, cmd.Process.Pid)
	defer removeAgentRecord(req.DispatchDir, record)
	out = newCapture(MaxOutputBytes)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()
	waitErr = cmd.Wait()
	_ = killGroup(cmd.Process.Pid) // children left behind die with the dispatch
	select {
	case <-copied:
	case <-time.After(waitDelay): // a child escaped the group and holds stdout open
		pr.Close()
		<-copied
	}
	return out, waitErr, nil
}

func (a *commandAgent) environ() []string {
	if a.env != nil {
		return append([]string(nil), a.env...)
	}
	return os.Environ()
}

func exitReason(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "agent killed by signal " + ws.Signal().String()
	}
	return "agent exited " + strconv.Itoa(e.ExitCode())
}

// killGroup kills the process group led by pid; a group already gone is no error.
// On Windows only pid itself is killed (docs/platforms.md).
func killGroup(pid int) error { return platform.KillProcessGroup(pid) }

// lastLine returns the last non-empty line of the file's final 4 KiB, clipped.
func lastLine(path string) string {
	f, err := runfile.OpenNoFollow(path, runfile.AgentLog)
	if err != nil {
		return ""
	}
	defer f.Close()
	st := f.Stat()
	const tail = 4096
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := strings.Split(string(buf), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return clipSummary(s)
		}
	}
	return ""
}
