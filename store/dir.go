package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
)

// lockDir holds the per-key lock files of PutIf; it is not part of the key space.
const lockDir = ".locks"

// Dir is a Backend on a local directory: one file per key. Writes are atomic
// (temp file, fsync, rename) and never follow a symbolic link; versions are
// the sha256 of the content; PutIf holds an advisory lock per key.
type Dir struct {
	root string
}

// OpenDir returns the store in directory root, which must exist.
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
	return &Dir{root: abs}, nil
}

// String returns the store's directory.
func (d *Dir) String() string { return d.root }

func version(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Get returns key's bytes and version.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := CheckKey(key); err != nil {
		return nil, "", err
	}
	data, err := d.read(key)
	if err != nil {
		return nil, "", err
	}
	return data, version(data), nil
}

func (d *Dir) read(key string) ([]byte, error) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %v", d.root, err)
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errkind.Errorf(ErrNotFound, "store %s: no object %s", d.root, key)
	}
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxObject+1))
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	if len(data) > MaxObject {
		return nil, errkind.Errorf(ErrCorrupt, "store %s: %s is larger than %d bytes", d.root, key, MaxObject)
	}
	return data, nil
}

// Has reports whether key exists.
func (d *Dir) Has(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	_, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errkind.Errorf(ErrUnreachable, "store %s: %s: %v", d.root, key, err)
	}
	return true, nil
}

// Put writes key atomically.
func (d *Dir) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := safewrite.WriteAtomicIn(d.root, filepath.FromSlash(key), data); err != nil {
		return errkind.Errorf(ErrUnreachable, "store %s: writing %s: %v", d.root, key, err)
	}
	return nil
}

// PutIf writes key when its current version is version ("" = absent), under a
// lock shared by every process that writes this store.
func (d *Dir) PutIf(ctx context.Context, key string, data []byte, ver string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	lock := filepath.Join(d.root, lockDir, strings.ReplaceAll(key, "/", "%"))
	// A store may come from someone else: its lock folder is created through a
	// no-follow root, never through a link planted in its place.
	if err := safewrite.MkdirIn(d.root, lockDir); err != nil {
		return "", errkind.Errorf(ErrUnreachable, "store %s: %v", d.root, err)
	}
	var out string
	err := safewrite.WithLock(lock, func(*os.File) error {
		cur, err := d.read(key)
		switch {
		case errors.Is(err, ErrNotFound):
			if ver != "" {
				return errkind.Errorf(ErrConflict, "store %s: %s was removed by another writer", d.root, key)
			}
		case err != nil:
			return err
		case version(cur) != ver:
			return errkind.Errorf(ErrConflict, "store %s: %s was changed by another writer", d.root, key)
		}
		if err := d.Put(ctx, key, data); err != nil {
			return err
		}
		out = version(data)
		return nil
	})
	return out, err
}

// List returns the keys under prefix, sorted; temp files and locks are skipped.
func (d *Dir) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == lockDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		if strings.HasPrefix(rel, prefix) {
			keys = append(keys, rel)
		}
		return nil
	})
	if err != nil {
		return nil, errkind.Errorf(ErrUnreachable, "store %s: listing %s: %v", d.root, prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// Open returns the Backend a store URL names: a local directory given as a
// path or a file:// URL, or an S3 bucket as s3://bucket[/prefix][?endpoint=
// host:port&insecure=1&region=r] with credentials from the process's
// environment (see OpenS3).
func Open(ctx context.Context, url string) (Backend, error) {
	return OpenEnv(ctx, url, os.Getenv)
}

// OpenEnv is Open with the environment read through getenv (credentials,
// endpoint and region of an s3:// store).
func OpenEnv(ctx context.Context, url string, getenv func(string) string) (Backend, error) {
	switch {
	case url == "":
		return nil, errkind.New(ErrBadURL, "empty store URL: give a directory or s3://bucket/prefix")
	case strings.HasPrefix(url, "file://"):
		return OpenDir(strings.TrimPrefix(url, "file://"))
	case !strings.Contains(url, "://"):
		return OpenDir(url)
	case strings.HasPrefix(url, "s3://"):
		return OpenS3(ctx, url, getenv)
	}
	return nil, errkind.New(ErrBadURL, fmt.Sprintf("store URL %q: unknown scheme (use a directory, file:///dir or s3://bucket/prefix)", url))
}
