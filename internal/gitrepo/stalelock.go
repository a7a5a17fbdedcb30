package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/replaytool/replay/internal/platform"
)

// A replay killed between creating <file>.lock and renaming it leaves the lock
// behind, and git's protocol then refuses every later write of that file. git
// itself leaves such a lock for a person to remove, because it cannot tell whose it
// is. replay can tell for its own: before its lock exists it writes the lock's
// content under a private name (<gitDir>/replay-lock-<pid>-<n>.new), records the
// lock's path and that file's identity (device and inode) in an intent file
// <gitDir>/replay-lock-<pid>-<n>, and only then links the file to the lock's path;
// it removes the intent and the private name after the rename. A later
// write that finds the lock held looks for an intent whose process is gone and that
// names this very file: the same path and inode, last changed no later than
// intentSlack after the intent was written (replay writes the lock at once; a file
// that reuses the inode later is younger). That lock is replay's own, left by a
// kill, and is removed. Any other lock (git's, a live replay's, or one created after
// the recorded one was renamed away) is never touched.

const intentPrefix = "replay-lock-"

// intentSlack bounds how long after its intent replay's own lock can last change.
const intentSlack = 2 * time.Second

var intentSeq atomic.Int64

// stagedSuffix ends the name of a lock's content written before it is linked to
// the lock's path: <gitDir>/replay-lock-<pid>-<n>.new beside its intent.
const stagedSuffix = ".new"

// stageLock writes data to a new private file of the git directory, syncs it, and
// records the intent to link it to lock. It returns the staged file's and the
// intent's paths (each "" when not created) for the caller to remove when done.
func stageLock(gitDir, lock string, data []byte) (staged, intent string, err error) {
	name := fmt.Sprintf("%s%d-%d", intentPrefix, os.Getpid(), intentSeq.Add(1))
	staged = filepath.Join(gitDir, name+stagedSuffix)
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", "", fmt.Errorf("%s: cannot create the lock's content: %w", staged, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	var st os.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return staged, "", fmt.Errorf("%s: cannot write the lock's content: %w", staged, err)
	}
	intent = filepath.Join(gitDir, name)
	if err := os.WriteFile(intent, []byte(lock+"\n"+identity(st)+"\n"), 0o644); err != nil {
		return staged, intent, fmt.Errorf("%s: cannot record the lock it is about to take: %w", intent, err)
	}
	return staged, intent, nil
}

// swept holds the git directories whose dead replays' leftovers this process has
// already removed.
var swept sync.Map

// sweepOnce removes, once per process and git directory, what replays killed
// mid-write left that names no lock still held (staged content, intents whose lock
// is gone); an intent whose lock is still there waits for the write that needs it.
func sweepOnce(gitDir string) {
	if _, done := swept.LoadOrStore(gitDir, true); !done {
		removeStaleLock(gitDir, "")
	}
}

// removeStaleLock removes lock when an intent of a replay process that no longer
// runs names it, and reports whether it did. Intents of dead processes whose lock
// is gone are removed on the way.
func removeStaleLock(gitDir, lock string) bool {
	entries, err := os.ReadDir(gitDir)
	if err != nil {
		return false
	}
	removed := false
	for _, e := range entries {
		pid, ok := intentPID(e.Name())
		if !ok || processAlive(pid) {
			continue
		}
		path := filepath.Join(gitDir, e.Name())
		if strings.HasSuffix(e.Name(), stagedSuffix) {
			os.Remove(path) // a dead replay's staged content: only this name goes
			continue
		}
		info, err := os.Lstat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		named, id, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		st, err := os.Lstat(named)
		switch {
		case errors.Is(err, os.ErrNotExist):
			os.Remove(path) // its lock was renamed away or removed: nothing left to claim
		case err == nil && (identity(st) != id || changedAt(st).After(info.ModTime().Add(intentSlack))):
			os.Remove(path) // the file at that path now is another's lock
		case err == nil && named == lock && !removed:
			if os.Remove(lock) == nil {
				removed = true
			}
			os.Remove(path)
		}
	}
	return removed
}

// identity names one file by its device and inode.
func identity(st os.FileInfo) string {
	sys, ok := platform.FileStat(st)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", sys.Dev, sys.Ino)
}

// changedAt is the file's status change time (its mtime where that is unknown).
func changedAt(st os.FileInfo) time.Time {
	if sys, ok := platform.FileStat(st); ok {
		return sys.Ctime
	}
	return st.ModTime()
}

// intentPID reads the pid from an intent file name.
func intentPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, intentPrefix)
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// processAlive reports whether a process with pid runs (or might: only "no such
// process" counts as gone).
func processAlive(pid int) bool { return platform.ProcessAlive(pid) }
