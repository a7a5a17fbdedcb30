package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/platform"
)

// Folders of a directory store outside its key space (keys never start with a dot).
const (
	lockDir = ".locks" // the per-key lock files of PutIf
	tempDir = ".tmp"   // objects being written, renamed into place when whole
)

// Dir is a Backend on a local directory: one file per key. A store directory
// is shared input: every object is opened without following a link and
// without blocking (a FIFO or device planted there is refused, never read),
// checked to be a regular file and its size checked before a byte is read.
// Writes are atomic (a temp file in .tmp, held locked while written, fsync,
// rename) and never follow a link; versions are the sha256 of the content;
// PutIf holds an advisory lock per key. Temp files of a killed writer are
// swept by the next one (their lock is free).
type Dir struct {
	root string
}

// OpenDir returns the store in directory root, which must exist, and sweeps
// the temp files a killed writer left in it.
func OpenDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errkind.Errorf(ErrBadURL, "store %s: %v", root, err)
	}
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errkind.Errorf(ErrNotFound, "store %s: no such directory: create it first (mkdir -p %s)", abs, abs)
	}
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %v", abs, err)
	}
	if !st.IsDir() {
		return nil, errkind.Errorf(ErrBadURL, "store %s: not a directory", abs)
	}
	d := &Dir{root: abs}
	d.sweep()
	return d, nil
}

// String returns the store's directory.
func (d *Dir) String() string { return d.root }

func version(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (d *Dir) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %v", d.root, err)
	}
	return r, nil
}

// Get returns key's bytes and version; an object larger than max is refused
// before it is read.
func (d *Dir) Get(ctx context.Context, key string, max int64) ([]byte, string, error) {
	if err := CheckKey(key); err != nil {
		return nil, "", err
	}
	data, err := d.read(ctx, key, max, nil)
	if err != nil {
		return nil, "", err
	}
	return data, version(data), nil
}

// getInto is Get reading into buf when it has the room (see GetInto).
func (d *Dir) getInto(ctx context.Context, key string, max int64, buf []byte) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	return d.read(ctx, key, max, buf)
}

// read opens key non-blocking and without following a final link, checks it
// is a regular file of at most max bytes, then reads it (into buf when it
// has the room).
func (d *Dir) read(ctx context.Context, key string, max int64, buf []byte) ([]byte, error) {
	r, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := platform.OpenInRootNoFollow(r, filepath.FromSlash(key), os.O_RDONLY|platform.ONonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errkind.Errorf(ErrNotFound, "store %s: no object %s", d.root, key)
	}
	if err != nil {
		if st, lerr := r.Lstat(filepath.FromSlash(key)); lerr == nil && !st.Mode().IsRegular() || errors.Is(err, platform.ErrLink) {
			return nil, errkind.Errorf(ErrCorrupt, "store %s: %s is a link or not a regular file, not an object: remove it", d.root, key)
		}
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	if !st.Mode().IsRegular() {
		return nil, errkind.Errorf(ErrCorrupt, "store %s: %s is not a regular file (%s): remove it", d.root, key, st.Mode().Type())
	}
	if st.Size() > max {
		return nil, errkind.Errorf(ErrCorrupt, "store %s: %s is %d bytes, more than the %d an object of its kind may have (corrupt): remove it and push the run again", d.root, key, st.Size(), max)
	}
	data := sized(buf, st.Size())
	if _, err := io.ReadFull(ctxReader{ctx, f}, data); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errkind.Errorf(ErrCorrupt, "store %s: %s changed while read (%v)", d.root, key, err)
	}
	return data, nil
}

// ctxReader stops a read loop when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > 1<<20 {
		p = p[:1<<20]
	}
	return c.r.Read(p)
}

// Has reports whether key exists.
func (d *Dir) Has(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	r, err := d.openRoot()
	if err != nil {
		return false, err
	}
	defer r.Close()
	st, err := r.Lstat(filepath.FromSlash(key))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	return st.Mode().IsRegular(), nil
}

// Put writes key atomically.
func (d *Dir) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if int64(len(data)) > MaxObject {
		return errkind.Errorf(ErrBadURL, "store %s: %s is larger than %d bytes", d.root, key, MaxObject)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := d.openRoot()
	if err != nil {
		return err
	}
	defer r.Close()
	if err := d.put(ctx, r, key, data); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errkind.Errorf(ErrUnreachable, "store %s: writing %s: %v", d.root, key, err)
	}
	return nil
}

// put writes data to .tmp/<random> (locked, so a sweep by another process
// leaves it alone), syncs it and renames it to key. The folders of key are
// made real folders within the root (a link among them is an error).
func (d *Dir) put(ctx context.Context, r *os.Root, key string, data []byte) (err error) {
	if err := mkdirsIn(r, tempDir); err != nil {
		return err
	}
	if err := mkdirsIn(r, path.Dir(key)); err != nil {
		return err
	}
	tmp, f, err := lockedTemp(r)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			r.Remove(tmp)
		}
	}()
	for off := 0; off < len(data); off += 1 << 20 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := f.Write(data[off:min(off+1<<20, len(data))]); err != nil {
			return err
		}
	}
	if err := f.Chmod(0o644); err != nil { // O_CREATE's mode is cut by the umask
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if st, err := r.Lstat(filepath.FromSlash(key)); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): remove it", key, st.Mode().Type())
	}
	if err := r.Rename(tmp, filepath.FromSlash(key)); err != nil {
		return err
	}
	return f.Close()
}

// lockedTemp creates a new temp file in the store's temp folder and locks it.
// Another process's sweep may take the file between its creation and the lock
// (it is not locked yet, so it looks like a dead writer's): a temp file found
// locked by the sweep, or no longer at its name once locked, is dropped and
// another made, so the file returned is locked and still in place.
func lockedTemp(r *os.Root) (string, *os.File, error) {
	for range 8 {
		var suffix [8]byte
		if _, err := rand.Read(suffix[:]); err != nil {
			return "", nil, err
		}
		tmp := filepath.Join(tempDir, hex.EncodeToString(suffix[:]))
		f, err := platform.OpenInRootNoFollow(r, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return "", nil, err
		}
		if err := platform.TryLock(f); errors.Is(err, platform.ErrWouldBlock) {
			f.Close() // a sweep holds it and removes it
			continue
		} else if err != nil {
			f.Close()
			r.Remove(tmp)
			return "", nil, err
		}
		held, herr := f.Stat()
		named, nerr := r.Lstat(tmp)
		if herr == nil && nerr == nil && os.SameFile(held, named) {
			return tmp, f, nil
		}
		f.Close() // swept before the lock: write elsewhere
	}
	return "", nil, fmt.Errorf("%s: every temp file was swept before it could be locked", tempDir)
}

// mkdirsIn makes dir (slash-separated) and its parents inside r; each must
// be a real folder, never a link. New folders get 0755 less the umask.
func mkdirsIn(r *os.Root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	cur := ""
	for _, part := range strings.Split(dir, "/") {
		cur = path.Join(cur, part)
		st, err := r.Lstat(filepath.FromSlash(cur))
		if errors.Is(err, fs.ErrNotExist) {
			if err := r.Mkdir(filepath.FromSlash(cur), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is not a folder (%s): a link or file stands where the store keeps its objects", cur, st.Mode().Type())
		}
	}
	return nil
}

// sweep removes the temp files of writers that died (their lock is free).
func (d *Dir) sweep() {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return
	}
	defer r.Close()
	if st, err := r.Lstat(tempDir); err != nil || !st.IsDir() {
		return
	}
	dir, err := r.Open(tempDir)
	if err != nil {
		return
	}
	names, _ := dir.Readdirnames(maxListKeys)
	dir.Close()
	for _, name := range names {
		rel := filepath.Join(tempDir, name)
		f, err := platform.OpenInRootNoFollow(r, rel, os.O_RDONLY|platform.ONonBlock, 0)
		if err != nil {
			continue
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && platform.TryLock(f) == nil {
			r.Remove(rel)
		}
		f.Close()
	}
}

// PutIf writes key when its current version is version ("" = absent), under a
// lock shared by every process that writes this store: the lock file lives
// in .locks inside the store, opened without following a link.
func (d *Dir) PutIf(ctx context.Context, key string, data []byte, ver string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	r, err := d.openRoot()
	if err != nil {
		return "", err
	}
	defer r.Close()
	unlock, err := d.lock(ctx, r, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	cur, err := d.read(ctx, key, MaxObject, nil)
	switch {
	case errors.Is(err, ErrNotFound):
		if ver != "" {
			return "", errkind.Errorf(ErrConflict, "store %s: %s was removed by another writer", d.root, key)
		}
	case err != nil:
		return "", err
	case version(cur) != ver:
		return "", errkind.Errorf(ErrConflict, "store %s: %s was changed by another writer", d.root, key)
	}
	if err := d.Put(ctx, key, data); err != nil {
		return "", err
	}
	return version(data), nil
}

// lock takes the lock of key, polling so a cancelled ctx stops the wait.
func (d *Dir) lock(ctx context.Context, r *os.Root, key string) (func(), error) {
	if err := mkdirsIn(r, lockDir); err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %v", d.root, err)
	}
	name := filepath.Join(lockDir, strings.ReplaceAll(key, "/", "%"))
	f, err := platform.OpenInRootNoFollow(r, name, os.O_RDWR|os.O_CREATE|platform.ONonBlock, 0o644)
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: lock %s: %v", d.root, name, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errkind.Errorf(ErrCorrupt, "store %s: lock %s is not a regular file: remove it", d.root, name)
	}
	for {
		err := platform.TryLock(f)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, platform.ErrWouldBlock) {
			f.Close()
			return nil, errkind.Errorf(ErrUnreachable, "store %s: lock %s: %v", d.root, name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// List returns the keys under prefix, sorted; temp files, locks, links and
// what is not a regular file are skipped. At most maxListKeys keys and
// maxListBytes of names are read: a larger listing is an error.
func (d *Dir) List(ctx context.Context, prefix string) ([]string, error) {
	start := "."
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		start = prefix[:i]
		if CheckKey(start) != nil {
			return nil, nil
		}
	}
	var (
		keys  []string
		bytes int
	)
	err := fs.WalkDir(os.DirFS(d.root), start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(e.Name(), ".") && p != "." {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() || !strings.HasPrefix(p, prefix) {
			return nil
		}
		keys = append(keys, p)
		bytes += len(p)
		if len(keys) > maxListKeys || bytes > maxListBytes {
			return errkind.Errorf(ErrCorrupt, "store %s: more than %d keys (%d bytes of names) under %q: the store is not one replay wrote, or needs pruning", d.root, maxListKeys, maxListBytes, prefix)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, errkind.Errorf(ErrUnreachable, "store %s: listing %s: %v", d.root, prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}
