package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrUnsafePath marks a path from a file that points outside the directory it belongs to.
var ErrUnsafePath = errors.New("unsafe path")

// unsafePathError is a refusal whose message stands alone and that matches ErrUnsafePath.
type unsafePathError struct{ msg string }

func (e *unsafePathError) Error() string { return e.msg }
func (e *unsafePathError) Unwrap() error { return ErrUnsafePath }

func unsafePath(format string, args ...any) error {
	return &unsafePathError{msg: fmt.Sprintf(format, args...)}
}

// SafeJoin joins name, a path read from a file, onto dir and refuses anything that
// would leave dir: an empty or absolute name, ".." components, or a symlink (at any
// level) that resolves outside dir. The returned path is dir/name, unresolved.
func SafeJoin(dir, name string) (string, error) {
	switch {
	case name == "":
		return "", unsafePath("empty path")
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`):
		return "", unsafePath("%q is an absolute path, want a name inside %s", clip(name, 80), dir)
	case strings.ContainsRune(name, 0) || !filepath.IsLocal(name):
		return "", unsafePath("%q leaves %s", clip(name, 80), dir)
	}
	joined := filepath.Join(dir, name)
	root, whole := resolveDir(dir)
	real := ""
	if whole {
		real = resolveBelow(root, joined, name)
	} else {
		real = resolveExisting(joined)
	}
	if !within(real, root) {
		return "", unsafePath("%q resolves to %s, outside %s (a symlink out)", clip(name, 80), real, dir)
	}
	return joined, nil
}

// resolveExisting resolves the symlinks of the longest existing prefix of path and
// appends the rest unchanged.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	rest := ""
	for p := path; ; {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// resolveDir is resolveExisting(dir); whole says every component of dir
// exists (its symlinks all resolved).
func resolveDir(dir string) (string, bool) {
	path := filepath.Clean(dir)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real, true
	}
	return resolveExisting(dir), false
}

// resolveBelow is resolveExisting(joined) for joined = dir/name, a local
// name, given root, the whole resolution of dir (resolveDir): the components
// of dir are not looked up again (SafeJoin runs for every dispatch file of a
// run, and dir is a dozen components deep). The first symlink among name's
// components sends it to resolveExisting, so the result is always the same.
func resolveBelow(root, joined, name string) string {
	if runtime.GOOS == "windows" {
		return resolveExisting(joined)
	}
	parts := strings.Split(filepath.Clean(name), string(filepath.Separator))
	p := root
	for i, part := range parts {
		next := filepath.Join(p, part)
		fi, err := os.Lstat(next)
		if err != nil {
			// no such component (or none can be looked up): the
			// longest existing prefix is p, the rest appended
			return filepath.Join(append([]string{p}, parts[i:]...)...)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return resolveExisting(joined)
		}
		p = next
	}
	return p
}

// within reports whether path equals root or lies below it (both clean, absolute).
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// DispatchPath returns the path of the entry's dispatch file inside dir, refusing a
// file field that points outside it.
func (e Entry) DispatchPath(dir string) (string, error) {
	p, err := SafeJoin(dir, e.File)
	if err != nil {
		return "", fmt.Errorf("seq %d: field \"file\": %w", e.Seq, err)
	}
	return p, nil
}

// SessionOfDir returns the session id in a "crucible-dispatch-<sid>" or
// "dispatch-<sid>" directory name.
func SessionOfDir(dir string) (string, bool) {
	base := filepath.Base(filepath.Clean(dir))
	for _, prefix := range []string{"crucible-dispatch-", "dispatch-"} {
		if sid, ok := strings.CutPrefix(base, prefix); ok && sid != "" && !strings.ContainsAny(sid, `/\`) {
			return sid, true
		}
	}
	return "", false
}

// ValidateDispatchDir checks the dispatch_dir a marker names: it must be a
// crucible-dispatch-* or dispatch-* directory directly inside one of roots (the
// scratch dir, $TMPDIR, /tmp), also after resolving symlinks. The error names the
// marker file and field.
func ValidateDispatchDir(markerPath, dispatchDir string, roots ...string) (string, error) {
	bad := func(why string) error {
		return unsafePath("%s: field \"dispatch_dir\" %q %s; fix the marker or pass the dispatch directory as PATH", markerPath, clip(dispatchDir, 120), why)
	}
	if !filepath.IsAbs(dispatchDir) || strings.ContainsRune(dispatchDir, 0) {
		return "", bad("is not an absolute path")
	}
	clean := filepath.Clean(dispatchDir)
	if _, ok := SessionOfDir(clean); !ok {
		return "", bad("is not a crucible-dispatch-* or dispatch-* directory")
	}
	for i, p := range []string{clean, resolveExisting(clean)} {
		if i == 1 && p == clean {
			break // no link on the way: the same answer
		}
		if _, ok := SessionOfDir(p); !ok || !underARoot(filepath.Dir(p), roots) {
			return "", bad("is not inside the scratch directory or $TMPDIR")
		}
	}
	return clean, nil
}

// underARoot reports whether parent is one of roots, as written or once
// resolved; the paths are resolved only when no root is parent as written.
func underARoot(parent string, roots []string) bool {
	for _, r := range roots {
		if r != "" && filepath.Clean(parent) == filepath.Clean(r) {
			return true
		}
	}
	real := resolveExisting(parent)
	for _, r := range roots {
		if r != "" && real == resolveExisting(r) {
			return true
		}
	}
	return false
}

// exists reports whether path exists (following symlinks).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
