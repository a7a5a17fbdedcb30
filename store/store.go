package store

import (
	"context"
	"errors"
	"fmt"
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

// OpenEnv returns the Backend a store URL names: a local directory given as a
// path or a file:// URL, or an S3 bucket as s3://bucket[/prefix][?endpoint=
// host:port&insecure=1&region=r] with credentials, endpoint and region read
// through getenv (see OpenS3).
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

// getterInto is a Backend that can read an object into a caller's buffer.
type getterInto interface {
	getInto(ctx context.Context, key string, max int64, buf []byte) ([]byte, error)
}

// GetInto is Get without the version, reading into buf when it has the room
// (the returned slice is then buf's), so a loop reading chunks allocates one
// buffer, not one a chunk. A Backend that cannot returns Get's bytes.
func GetInto(ctx context.Context, b Backend, key string, max int64, buf []byte) ([]byte, error) {
	if g, ok := b.(getterInto); ok {
		return g.getInto(ctx, key, max, buf)
	}
	data, _, err := b.Get(ctx, key, max)
	return data, err
}

// sized returns buf[:n] when buf has the room, else a new slice of n bytes.
func sized(buf []byte, n int64) []byte {
	if int64(cap(buf)) >= n {
		return buf[:n]
	}
	return make([]byte, n)
}

// URLOf is the URL that opens b again, for a printed follow-up command: an
// S3 store's URL as given (with its endpoint, insecure and region, which
// String leaves out; never a credential), else String.
func URLOf(b Backend) string {
	if u, ok := b.(interface{ URL() string }); ok {
		return u.URL()
	}
	return b.String()
}
