package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/safewrite"
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

// Unwrap makes the error a refusal (ErrRefused).
func (e *BusyError) Unwrap() error { return ErrRefused }

// Lock is the project's replay lock, held until Release.
type Lock struct {
	f       *os.File
	path    string
	created []string // directories AcquireLock made, deepest first
	// Waited reports whether another process held the lock when it was asked for:
	// what was read before may be stale.
	Waited bool
}

// AcquireLock takes the replay lock in shadowDir (refused as CheckShadowDir
// refuses a shadow directory), waiting up to wait for another
// replay process to release it; then it fails with a *BusyError naming that
// process's pid. The kernel releases the lock when the process ends, however it
// ends. Release removes the lock file (and the directories made for it), so a run
// that changes nothing leaves nothing behind.
func AcquireLock(shadowDir string, wait time.Duration) (*Lock, error) {
	// The shadow directory's own rule first (a link, a file, a .git or a work
	// tree's git dir in its place is refused, exit 3): the lock is its first write.
	shadow, err := ProveShadowDir(shadowDir)
	if err != nil {
		return nil, err
	}
	return acquireLock(shadow, wait)
}

// acquireLock is AcquireLock on a checked shadow directory.
func acquireLock(shadow ShadowDir, wait time.Duration) (*Lock, error) {
	shadowDir, err := shadow.path()
	if err != nil {
		return nil, err
	}
	l := &Lock{path: filepath.Join(shadowDir, LockFile)}
	if err := l.makeDirs(shadowDir); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		held, pid, err := l.try()
		if err != nil {
			l.removeDirs()
			return nil, err
		}
		if held {
			_, _ = l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // informative only
			return l, nil
		}
		if pid >= 0 {
			l.Waited = true
		}
		if time.Now().After(deadline) {
			l.removeDirs()
			return nil, &BusyError{PID: max(pid, 0), Path: l.path}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// try opens the lock file and tries to lock it once. held is true when it has the
// lock on the file that is at the path now (a holder removes the file before it
// unlocks, so a lock on a removed file is worth nothing); otherwise pid is the
// holder's pid (0 when unknown), or -1 when the file was just replaced.
func (l *Lock) try() (held bool, pid int, err error) {
	f, err := platform.OpenNoFollow(l.path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		// The holder removed the directory it had made when it let go: make it again.
		return false, -1, l.makeDirs(filepath.Dir(l.path))
	}
	if err != nil {
		return false, 0, fmt.Errorf("%s: cannot open the replay lock: %w", l.path, err)
	}
	err = platform.TryLock(f)
	if errors.Is(err, platform.ErrWouldBlock) {
		pid := readPID(f)
		f.Close()
		return false, pid, nil
	}
	if err != nil {
		f.Close()
		return false, 0, fmt.Errorf("%s: cannot lock: %w", l.path, err)
	}
	open, serr := f.Stat()
	now, lerr := os.Lstat(l.path)
	if serr != nil || lerr != nil || !os.SameFile(open, now) {
		f.Close()
		return false, -1, nil
	}
	l.f = f
	return true, 0, nil
}

// makeDirs makes sure dir, the shadow directory, is a real directory, creating it
// and its missing parents, and remembers which it made. They are created through
// the no-follow root of dir's deepest existing parent (internal/safewrite.MkdirIn):
// a symbolic link or a file where the shadow directory or a directory made for it
// belongs is refused with one line, and nothing is created through it.
func (l *Lock) makeDirs(dir string) error {
	var missing []string
	base := filepath.Dir(dir)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			if d != dir {
				base = d
			}
			break
		}
		missing = append(missing, d)
	}
	rel, err := filepath.Rel(base, dir)
	if err == nil {
		err = safewrite.MkdirIn(base, rel)
	}
	if err != nil {
		return fmt.Errorf("cannot make the shadow directory for its lock: %w", err)
	}
	l.created = missing
	return nil
}

// removeDirs removes the directories makeDirs made, when they are still empty.
func (l *Lock) removeDirs() {
	for _, d := range l.created {
		//replay:door rmdir of the directories AcquireLock itself created
		if os.Remove(d) != nil {
			return
		}
	}
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

// Release removes the lock file and gives the lock up, then removes the directories
// made for it when they are empty. It is safe to call on a nil Lock and more than
// once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	//replay:door the lock file this process created and holds
	os.Remove(l.path) // while still holding it: a waiter then sees a new file
	_ = platform.Unlock(l.f)
	l.f.Close()
	l.f = nil
	l.removeDirs()
}

// LockProject takes the project's replay lock in the shadow directory, waiting
// DefaultLockWait, so two replay processes never change one project at once; nil
// when there is no shadow directory to hold it (Release on nil does nothing).
func LockProject(shadow string) (*Lock, error) {
	if shadow == "" {
		return nil, nil
	}
	return AcquireLock(shadow, DefaultLockWait)
}

// LockShadow is LockProject on a shadow directory its caller has already checked
// (ProveShadowDir, or the Store it opened): the lock is still taken before any
// write, without a second check of the same directory.
func LockShadow(shadow ShadowDir) (*Lock, error) {
	return acquireLock(shadow, DefaultLockWait)
}
