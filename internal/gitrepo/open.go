package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/helper/chroot"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Open opens the git working tree at dir, or at the nearest parent holding a .git
// directory, with alternates resolved by absolute path.
func Open(dir string) (*git.Repository, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		if st, err := os.Stat(filepath.Join(root, ".git")); err == nil && st.IsDir() {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			// No .git directory: let go-git say why (a .git file, a bare repo, nothing).
			return git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
		}
		root = parent
	}
	if err := CheckPackDir(filepath.Join(root, ".git")); err != nil {
		return nil, err
	}
	worktree, dotGit := chrootsOf(root)
	fs, objects := LeanFS(dotGit), cache.NewObjectLRUDefault()
	alternatesFS := osfs.New("/", osfs.WithBoundOS())
	st := filesystem.NewStorageWithOptions(fs, objects, filesystem.Options{AlternatesFS: alternatesFS})
	dg := dotgit.NewWithOptions(fs, dotgit.Options{AlternatesFS: alternatesFS})
	repo, err := git.Open(newAltStorage(st, dg, objects), worktree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	return repo, nil
}

// chrootsOf is osfs.New(root) and osfs.New(root/.git): each resolves the
// links of its root (filepath.EvalSymlinks, an lstat per component of the
// path), so root is resolved once, and root/.git below it only when .git is
// itself a link. On any error each is osfs.New as before, which then keeps
// its root as written.
func chrootsOf(root string) (worktree, dotGit billy.Filesystem) {
	dot := filepath.Join(root, ".git")
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return osfs.New(root), osfs.New(dot)
	}
	worktree = chroot.New(osfs.Default, resolved)
	if st, err := os.Lstat(filepath.Join(resolved, ".git")); err == nil && st.Mode()&os.ModeSymlink == 0 {
		return worktree, chroot.New(osfs.Default, filepath.Join(resolved, ".git"))
	}
	return worktree, osfs.New(dot)
}

// PlainOpen is git.PlainOpen (the same repository found the same way, the same
// errors) with the repository's files read through LeanFS: the repository is
// opened by go-git, then its storage is made again on the lean file system,
// with an object already decoded answered from its cache (cachedStorage).
func PlainOpen(dir string) (*git.Repository, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	st, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return repo, nil
	}
	fs := st.Filesystem()
	lean := LeanFS(fs)
	if lean == fs {
		return repo, nil
	}
	var worktree billy.Filesystem // nil for a bare repository, as go-git leaves it
	if w, err := repo.Worktree(); err == nil {
		worktree = w.Filesystem
	}
	objects := cache.NewObjectLRUDefault()
	leanRepo, err := git.Open(&cachedStorage{Storage: filesystem.NewStorage(lean, objects), cache: objects}, worktree)
	if err != nil {
		return repo, nil // changed since go-git opened it: keep what go-git opened
	}
	return leanRepo, nil
}

// cachedStorage is go-git's storage answering an object it has decoded before
// from its object cache. go-git's own lookup of a loose object opens the
// object's file first and consults the cache only then, so every commit and
// tree read again (a checkpoint's history walked three times by one restore)
// was a file opened and closed again. An object is its hash: the cache's
// answer is the file's, and anything not in the cache (or cached with another
// type than asked) is go-git's lookup as before. Only an object removed from
// the repository after it was read (a prune while the repository is open)
// is still found, as the alternates' storage (altStorage) finds it too.
type cachedStorage struct {
	*filesystem.Storage
	cache cache.Object
}

// EncodedObject returns the object h of type t (any type for
// plumbing.AnyObject): the cached one, else go-git's lookup.
func (s *cachedStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if obj, ok := s.cache.Get(h); ok && (t == plumbing.AnyObject || obj.Type() == t) {
		return obj, nil
	}
	return s.Storage.EncodedObject(t, h)
}
