package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
)

// Error kinds of the store. The command layer maps them to exit codes.
var (
	// ErrNotFound: the key (or the bucket, or the directory) does not exist.
	ErrNotFound = errors.New("not found in the store")
	// ErrConflict: a PutIf lost the race: the object's version changed.
	ErrConflict = errors.New("the object changed in the store")
	// ErrBadURL: the store URL or a key is malformed.
	ErrBadURL = errors.New("bad store URL")
	// ErrUnreachable: the store could not be reached or refused the credentials.
	ErrUnreachable = errors.New("store unreachable")
	// ErrCorrupt: an object's content does not match its address or format.
	ErrCorrupt = errors.New("corrupt object in the store")
)

// MaxObject bounds one object, read or written: a run's large files and
// packs are stored as chunks of at most this size, and an index is smaller.
const MaxObject = 64 << 20

// Bounds of one listing: a store that lists more keys or longer names is
// refused, not read into memory without end (variables for the tests).
var (
	maxListKeys  = 200_000
	maxListBytes = 32 << 20
)

// Backend is where a store keeps its objects.
type Backend interface {
	// Get returns key's bytes and its version token; ErrNotFound when absent.
	// An object larger than max (or than MaxObject) is ErrCorrupt, refused
	// before its bytes are read; what is not a regular object (a FIFO, a
	// device, a link in a directory store) is ErrCorrupt, never opened for
	// a blocking read.
	Get(ctx context.Context, key string, max int64) (data []byte, version string, err error)
	// Has reports whether key exists.
	Has(ctx context.Context, key string) (bool, error)
	// Put writes key unconditionally and atomically (a reader sees the old
	// bytes or the new, never a part). Meant for content-addressed keys.
	// data is at most MaxObject bytes.
	Put(ctx context.Context, key string, data []byte) error
	// PutIf writes key only if its current version is version ("" means the
	// key must not exist yet), and returns the new version. A lost race is
	// ErrConflict: re-read, merge and try again.
	PutIf(ctx context.Context, key string, data []byte, version string) (string, error)
	// List returns the keys under prefix (a key prefix, not only a folder),
	// sorted. A listing of more than 200,000 keys or 32 MiB of names is
	// ErrCorrupt.
	List(ctx context.Context, prefix string) ([]string, error)
	// String names the store for messages (a URL without credentials).
	String() string
}

// CheckKey refuses a key that is empty, absolute, unclean or climbs out
// (".."); no part may start with a dot (temp files and locks do), so no object name can point a local store outside its directory.
func CheckKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") ||
		path.Clean(key) != key || key == "." || strings.HasPrefix(key, "../") || key == ".." {
		return errkind.New(ErrBadURL, fmt.Sprintf("bad object key %q: keys are clean relative slash paths", key))
	}
	for _, part := range strings.Split(key, "/") {
		if strings.HasPrefix(part, ".") { // "..", temp files and the lock folder

			return errkind.New(ErrBadURL, fmt.Sprintf("bad object key %q", key))
		}
	}
	return nil
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
