package e2ekit

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// ForPipeline builds the reference fixture and a sandbox whose HOME and TMPDIR
// are the fixture's.
func ForPipeline(t testing.TB, variants ...fixture.Variant) (*Sandbox, *fixture.Pipeline) {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: variants})
	require.NoError(t, err)
	return &Sandbox{Root: p.Root, Home: p.Home, Tmp: p.Tmp}, p
}

// WithoutTornTail returns the bytes of a fixture manifest that an append keeps in
// place: all of data but the torn last line the fixture writes (fixture.TornLine),
// which the first append moves to the manifest's torn sidecar; data that does not
// end with that line comes back whole. A manifest after replay starts with them.
func WithoutTornTail(data []byte) []byte {
	return bytes.TrimSuffix(data, []byte(fixture.TornLine))
}

// Now is the fixture's clock as --now takes it.
func Now(p *fixture.Pipeline) string { return p.Now.UTC().Format(time.RFC3339) }

// Digest is the fixture digest of the tree under root.
func Digest(t testing.TB, root string) string {
	t.Helper()
	d, err := fixture.Digest(root)
	require.NoError(t, err)
	return d
}

// SmallProject makes fixture.SmallProject in the sandbox's "project" directory.
func SmallProject(t testing.TB, s *Sandbox) (string, *git.Repository) {
	t.Helper()
	dir := filepath.Join(s.Root, "project")
	repo, err := fixture.SmallProject(dir)
	require.NoError(t, err)
	return dir, repo
}

// WriteFile writes content to dir/rel with mode, making its directories.
func WriteFile(t testing.TB, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
}

// ReadFile is the content of path; a failure fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// CopyDirTree copies the directory src to dst (which must not exist): directories,
// regular files with their modes and modification times, and symlinks as links.
// A copy is much cheaper than building a fixture again with the git binary.
func CopyDirTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			if err := CopyFile(path, target, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(target, info.ModTime(), info.ModTime())
		}
		return fmt.Errorf("CopyDirTree: %s is not a file, directory or symlink", path)
	})
}

// CopyFile copies the regular file src to dst, which must not exist.
func CopyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Hermetic builds the reference fixture with variants under t.TempDir() and
// points the test's HOME and TMPDIR inside it (t.Setenv: the test must not be
// parallel), for package tests that call the product's API directly.
func Hermetic(t testing.TB, variants ...fixture.Variant) *fixture.Pipeline {
	t.Helper()
	p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: variants})
	require.NoError(t, err)
	t.Setenv("HOME", p.Home)
	t.Setenv("TMPDIR", p.Tmp)
	return p
}
