package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/replaytool/replay/internal/exitcode"
)

// LockFile is the file in the shadow directory whose flock serialises the replay
// processes that change one project (restores, resumes, checkpoint creation). It
// holds the pid of the process that has it.
const LockFile = "replay.lock"

// DefaultLockWait is how long a replay process waits for another one to finish
// before it gives up.
const DefaultLockWait = 3 * time.Second

// BusyError says another replay process holds the project's lock. It is a refusal
// (exit code 3): nothing was changed, and running again later is safe.
type BusyError struct {
	PID  int // 0 when the lock file names no pid
	Path string
}

// Error names the other process and what to do.
func (e *BusyError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("another replay is running (%s) on this project, holding %s; wait for it to finish and retry; nothing was changed", pid, e.Path)
}

// Unwrap makes the error map to exit code 3.
func (e *BusyError) Unwrap() error { return exitcode.ErrRefused }

// Lock is the project's replay lock, held until Release.
type Lock struct {
	f *os.File
	// Waited reports whether another process held the lock when it was asked for:
	// what was read before may be stale.
	Waited bool
}

// AcquireLock takes the replay lock in shadowDir (created when missing), waiting up
// to wait for another replay process to release it; then it fails with a
// *BusyError naming that process's pid. The kernel releases the lock when the
// process ends, however it ends.
func AcquireLock(shadowDir string, wait time.Duration) (*Lock, error) {
	if err := os.MkdirAll(shadowDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create the shadow directory for its lock: %w", shadowDir, err)
	}
	path := filepath.Join(shadowDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the replay lock: %w", path, err)
	}
	l := &Lock{f: f}
	deadline := time.Now().Add(wait)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("%s: cannot lock: %w", path, err)
		}
		l.Waited = true
		if time.Now().After(deadline) {
			pid := readPID(f)
			f.Close()
			return nil, &BusyError{PID: pid, Path: path}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // informative only
	}
	return l, nil
}

// readPID reads the pid the holder wrote; 0 when there is none.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Release gives the lock up. It is safe to call on a nil Lock and more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}
