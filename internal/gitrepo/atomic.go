package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// go-git writes a loose ref and the index by truncating the file in place and
// writing it again: a process killed in between leaves an empty ref ("reference not
// found") or a torn index, and a git command running at the same time can interleave
// with it. WriteRef and WriteIndex follow git's own lock protocol instead: create
// <file>.lock with O_EXCL (which fails while another git process holds it), write
// it, fsync it and rename it over the file. A crash leaves the old or the new
// content, and git and replay never write the same file at once.

// lockWait is how long a write waits for another process's lock to go away.
var lockWait = 2 * time.Second

// LockedError says another process holds git's lock on a file replay must write.
type LockedError struct {
	// What names the file in the user's words: a ref name, or "the index".
	What string
	// Lock is the path of the lock file.
	Lock string
}

// Error names the lock file and what to do.
func (e *LockedError) Error() string {
	return fmt.Sprintf("another git process is writing %s (%s exists); wait for it to finish and retry, or remove the lock file if no git process is running", e.What, e.Lock)
}

// WriteRef points the ref name (a loose ref under refs/, or HEAD for a detached
// HEAD) of the git directory gitDir at h under git's lock protocol.
func WriteRef(gitDir string, name plumbing.ReferenceName, h plumbing.Hash) error {
	if name != plumbing.HEAD {
		if err := name.Validate(); err != nil || !strings.HasPrefix(name.String(), "refs/") {
			return fmt.Errorf("%q is not a ref name replay writes", name)
		}
	}
	return writeLocked(gitDir, filepath.Join(gitDir, filepath.FromSlash(name.String())), name.String(), []byte(h.String()+"\n"))
}

// WriteIndex writes idx as the index of the git directory gitDir under git's lock
// protocol.
func WriteIndex(gitDir string, idx *index.Index) error {
	data, err := encodeIndex(idx)
	if err != nil {
		return fmt.Errorf("encoding the index: %w", err)
	}
	return writeLocked(gitDir, filepath.Join(gitDir, "index"), "the index", data)
}

// writeLocked replaces path (a file of the git directory gitDir) with data through
// path.lock, waiting up to lockWait for a lock held by another process; a lock a
// killed replay left behind is removed first (see stalelock.go).
//
// The lock's content is written and synced under a private name first, its identity
// recorded in an intent, and only then linked to path.lock (link fails like O_EXCL
// while the lock exists): there is no moment when replay's lock exists and its
// intent does not, so a kill at any point leaves a lock the next write recognises.
func writeLocked(gitDir, path, what string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the directory: %w", dir, err)
	}
	lock := path + ".lock"
	sweepOnce(gitDir)
	staged, intent, err := stageLock(gitDir, lock, data)
	if staged != "" {
		defer os.Remove(staged)
	}
	if intent != "" {
		defer os.Remove(intent)
	}
	if err != nil {
		return err
	}
	if err := linkLock(staged, lock, what, func() bool { return removeStaleLock(gitDir, lock) }); err != nil {
		return err
	}
	if err := os.Rename(lock, path); err != nil {
		os.Remove(lock)
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable; a failure here loses nothing
		d.Close()
	}
	return nil
}

// linkLock links staged to lock, retrying with a growing pause while another
// process holds the lock, for up to lockWait. stale, when not nil, is asked once
// whether a held lock was left by a killed replay and has been removed.
func linkLock(staged, lock, what string, stale func() bool) error {
	deadline := time.Now().Add(lockWait)
	pause := 2 * time.Millisecond
	for {
		err := os.Link(staged, lock)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: cannot create the lock file: %w", lock, err)
		}
		if stale != nil && stale() {
			stale = nil
			continue
		}
		if time.Now().After(deadline) {
			return &LockedError{What: what, Lock: lock}
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// GitDir returns the .git directory of the working tree at dir, or "" when dir has
// no .git directory (a bare repository, a linked worktree's .git file).
func GitDir(dir string) string {
	gd := filepath.Join(dir, ".git")
	if st, err := os.Stat(gd); err == nil && st.IsDir() {
		return gd
	}
	return ""
}
