//go:build unix

package gitrepo

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/platform"
)

// TestLeanFSOpensAsTheChroot: every open for reading through LeanFS gives what
// go-billy's chroot gives (the same bytes, the same name, an error exactly when
// the chroot errs and then its error), whether the path holds links inside the
// root, out of it, dangling or looping, a file in the middle, a missing name, a
// name outside the root; writes and Chmod go through.
func TestLeanFSOpensAsTheChroot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "objects", "ab"), filepath.Join(root, "refs", "heads"), outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(filepath.Join(root, "objects", "ab", "cdef"), "object")
	write(filepath.Join(root, "refs", "heads", "main"), "ref\n")
	write(filepath.Join(root, "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(outside, "secret"), "outside")
	link := func(target, name string) { require.NoError(t, os.Symlink(target, filepath.Join(root, name))) }
	link("objects", "objlink")                    // a directory link inside the root
	link("HEAD", "headlink")                      // a file link inside the root
	link(filepath.Join(outside, "secret"), "abs") // out of the root, absolute
	link("../outside/secret", "rel")              // out of the root, relative
	link("nowhere", "dangling")
	link("loop", "loop")
	chroot := osfs.New(root)
	lean := LeanFS(osfs.New(root))
	_, isLean := lean.(leanFS)
	require.True(t, isLean)
	if runtime.GOOS == "linux" { // the lean path is taken where it can be, and only there
		for name, want := range map[string]bool{"objects/ab/cdef": true, "HEAD": true, "missing": true, "objects/missing/x": true,
			"objlink/ab/cdef": false, "objlink/missing": false, "headlink": false, "abs": false, "../outside/secret": false, "HEAD/x": false} {
			fi, err := lean.(leanFS).leanStat(name)
			assert.Equal(t, want, fi != nil || err != nil, name)
			f, err := lean.(leanFS).lean(name, os.O_RDONLY)
			assert.Equal(t, want, f != nil || err != nil, name)
			if f != nil {
				f.Close()
			}
		}
	}
	names := []string{
		"HEAD", "/HEAD", "./HEAD", "objects/ab/cdef", "objects//ab/./cdef", "refs/heads/main",
		"objlink/ab/cdef", "headlink", "abs", "rel", "dangling", "loop", "loop/x",
		"HEAD/x", "missing", "objects/missing/x", "objlink/missing", "objects/ab/cdef/x", "../outside/secret", "objects/../../outside/secret",
		"", ".", "objects",
	}
	read := func(fs billy.Filesystem, name string, flag int) (string, string, error) {
		f, err := fs.OpenFile(name, flag, 0)
		if err != nil {
			return "", "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return f.Name(), string(b), err
	}
	for _, name := range names {
		for _, flag := range []int{os.O_RDONLY, os.O_RDONLY | platform.ONoFollow | platform.ONonBlock} {
			wantName, want, wantErr := read(chroot, name, flag)
			gotName, got, gotErr := read(lean, name, flag)
			assert.Equal(t, wantName, gotName, name)
			assert.Equal(t, want, got, name)
			if wantErr == nil {
				assert.NoError(t, gotErr, name)
			} else {
				assert.EqualError(t, gotErr, wantErr.Error(), name)
			}
		}
		want, wantErr := chroot.Stat(name)
		got, gotErr := lean.Stat(name)
		if wantErr == nil {
			require.NoError(t, gotErr, name)
			assert.Equal(t, want.Name(), got.Name(), name)
			assert.Equal(t, want.Size(), got.Size(), name)
			assert.Equal(t, want.Mode(), got.Mode(), name)
			assert.Equal(t, want.ModTime(), got.ModTime(), name)
			assert.Equal(t, want.IsDir(), got.IsDir(), name)
			assert.Equal(t, want.Sys(), got.Sys(), name)
		} else {
			assert.EqualError(t, gotErr, wantErr.Error(), name)
		}
		f, err := lean.Open(name)
		wf, werr := chroot.Open(name)
		assert.Equal(t, werr == nil, err == nil, name)
		if err == nil {
			assert.Equal(t, wf.Name(), f.Name(), name)
			f.Close()
			wf.Close()
		}
	}
	// Stat of other kinds of file: a FIFO (never opened), a sticky directory, a
	// set-uid file.
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sticky"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(root, "sticky"), 0o755|os.ModeSticky))
	write(filepath.Join(root, "setuid"), "x")
	require.NoError(t, os.Chmod(filepath.Join(root, "setuid"), 0o755|os.ModeSetuid|os.ModeSetgid))
	for _, name := range []string{"fifo", "sticky", "setuid"} {
		want, err := chroot.Stat(name)
		require.NoError(t, err)
		got, err := lean.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, want.Mode(), got.Mode(), name)
		assert.Equal(t, want.Name(), got.Name(), name)
	}
	// A write goes to the chroot; Chmod is forwarded.
	f, err := lean.Create("objects/ab/new")
	require.NoError(t, err)
	_, err = f.Write([]byte("new"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, lean.(billy.Chmod).Chmod("objects/ab/new", 0o444))
	st, err := os.Stat(filepath.Join(root, "objects", "ab", "new"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o444), st.Mode().Perm())
	assert.Equal(t, billy.Capabilities(chroot), billy.Capabilities(lean))
}

// TestPlainOpenAsGoGit: PlainOpen opens what git.PlainOpen opens (a working tree,
// a bare repository), fails where it fails with its error, and reads through
// LeanFS.
func TestPlainOpenAsGoGit(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	work := filepath.Join(base, "work")
	bare := filepath.Join(base, "bare.git")
	_, err := git.PlainInit(work, false)
	require.NoError(t, err)
	_, err = git.PlainInit(bare, true)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "a"), []byte("a"), 0o644))
	want, err := git.PlainOpen(work)
	require.NoError(t, err)
	w, err := want.Worktree()
	require.NoError(t, err)
	_, err = w.Add("a")
	require.NoError(t, err)
	_, err = w.Commit("one", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@t", When: time.Unix(1, 0)}})
	require.NoError(t, err)
	for _, dir := range []string{work, bare, filepath.Join(base, "none"), base} {
		want, wantErr := git.PlainOpen(dir)
		got, gotErr := PlainOpen(dir)
		if wantErr != nil {
			assert.EqualError(t, gotErr, wantErr.Error(), dir)
			continue
		}
		require.NoError(t, gotErr, dir)
		wh, wErr := want.Head()
		gh, gErr := got.Head()
		assert.Equal(t, wErr, gErr, dir)
		if wErr == nil {
			assert.Equal(t, wh.Hash(), gh.Hash(), dir)
			c, err := got.CommitObject(gh.Hash())
			require.NoError(t, err)
			assert.Equal(t, "one", c.Message)
		}
		_, wErr = want.Worktree()
		gw, gErr := got.Worktree()
		assert.Equal(t, wErr, gErr, dir)
		if gErr == nil {
			assert.Equal(t, work, gw.Filesystem.Root())
		}
		st, ok := unwrapStorage(got.Storer)
		require.True(t, ok, dir)
		_, isLean := st.Filesystem().(leanFS)
		assert.True(t, isLean, dir)
	}
}
