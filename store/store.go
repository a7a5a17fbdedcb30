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

// MaxObject bounds one object, read or written (a git bundle of checkpoints is
// the largest thing a run stores).
const MaxObject = 1 << 30

// Backend is where a store keeps its objects.
type Backend interface {
	// Get returns key's bytes and its version token; ErrNotFound when absent.
	Get(ctx context.Context, key string) (data []byte, version string, err error)
	// Has reports whether key exists.
	Has(ctx context.Context, key string) (bool, error)
	// Put writes key unconditionally and atomically (a reader sees the old
	// bytes or the new, never a part). Meant for content-addressed keys.
	Put(ctx context.Context, key string, data []byte) error
	// PutIf writes key only if its current version is version ("" means the
	// key must not exist yet), and returns the new version. A lost race is
	// ErrConflict: re-read, merge and try again.
	PutIf(ctx context.Context, key string, data []byte, version string) (string, error)
	// List returns the keys under prefix (a key prefix, not only a folder),
	// sorted.
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
